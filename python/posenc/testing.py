"""posenc.testing — assertions for your own test suite (pytest or unittest): hold a model's encodings to posenc's
proofs where they live, and on failure see the verdict, the budget row and the worst entries.

    from posenc.testing import assert_matches_posenc
    def test_rope_cache():
        cos, sin = model.rotary_emb(x, position_ids)                      # your module's own cache
        assert_matches_posenc(np.stack([cos[0], sin[0]]), "rope", preset="hf-llama", regime="hf", form="hf")
"""
import posenc

__all__ = ["assert_matches_posenc", "PosencMismatch"]


class PosencMismatch(AssertionError):
    """The array failed posenc's check; ``report`` is the posenc.Report (fields, summary())."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def assert_matches_posenc(array, scheme, **spec):
    """Checks `array` with ``posenc.check(scheme, array, **spec)``; raises PosencMismatch (an AssertionError) with
    the report's Markdown — what it was held to, the budget row and bound, the worst entries — when the verdict is
    not pass. Returns the report. A bad spec or array raises ValueError as posenc.check does."""
    report = posenc.check(scheme, array, **spec)
    if not report.passed:
        shape = getattr(array, "shape", None)
        raise PosencMismatch(f"posenc check {scheme}: the array{'' if shape is None else ' of shape ' + str(tuple(shape))}"
                             f" does not match (verdict {report.fields.get('verdict', 'fail')}, budget row "
                             f"{report.fields.get('budget_row', '?')})\n\n{report.summary()}", report)
    return report
