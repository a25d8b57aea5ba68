"""Known failures of the OpInfo sweep (tests/test_opinfo.py), in one place, each with its reason.

Key: (OpInfo entry name, dtype name or "*", variant or "*"), variant one of "op", "noncontig",
"inplace", "out", "errors". A listed case that fails is reported as xfail; one that passes fails the
suite until its row is removed, so the list only shrinks. A new row needs a reason a reader can check
(the error, or the issue that will fix it).
"""

KNOWN_FAILURES = {
}
