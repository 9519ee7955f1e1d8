from __future__ import annotations

import gc

from sitegen.builder import gcpause


def test_paused_restores_the_collector_as_it_was() -> None:
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause does not end the outer one
    assert gc.isenabled()


def test_freezer_unfreezes_what_it_froze_only() -> None:
    assert gc.get_freeze_count() == 0
    with gcpause.freezer() as freeze:
        freeze()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    # A program that froze objects itself keeps them frozen.
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gcpause.freezer() as freeze:
            freeze()
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
