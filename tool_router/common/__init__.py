"""Parts both wings share, pure Python (no rclpy).

The catalog, errors, the explanation that crosses from routing to execution, clause splitting
and gating conditions, signing, redaction, paths and YAML helpers. Nothing here imports
``routing``, ``executor``, ``ros`` or ``cli``.
"""
