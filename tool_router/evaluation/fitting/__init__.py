"""Fitting and tuning on development data: one home, one objective, one test-split guard.

* :mod:`.lcr`   - ``tool-router fit lcr``: the learned clause router's scorer and thresholds;
* :mod:`.encoder` - ``tool-router fit encoder``: the fine-tuned top layer of the sentence encoder;
* :mod:`.gate`  - ``tool-router fit gate``: the hybrid policy's uncertainty gate;
* :mod:`.cdb`   - ``tool-router fit cdb``: the CDB constants the paper does not give;
* :mod:`.objective` - the one objective they share (macro composite, empty rates);
* :mod:`.guard` - refuses data that shares requests with a reporting (test) split, by content.

The command line lives in :mod:`.cli`; nothing here imports it.
"""
