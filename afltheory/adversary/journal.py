"""The journal of completed evaluations that makes long searches resumable: ``afltheory.pep.journal``
(defined there, below the adversary in the layers, so that ``pep.worst_schedule`` can use it too)."""

from ..pep.journal import SearchJournal, check_journal_path, decode_floats, digest

__all__ = ["SearchJournal", "check_journal_path", "decode_floats", "digest"]
