"""Published FL theorems beyond Yang et al. (issues 26, 40): one check ``published.<module>`` per paper module
of ``afltheory.published`` (``SELF_CHECKED``, the one-module pattern of issue 38), running that module's
``verify()`` — its engine forms through the one entry point ``afltheory.claims.verify`` (exact moments
where the model applies, else the one-sided 99 % t-UCB), and its plain closed-form checks of the statements
the engines cannot express (per-round decrease, lower bounds, limits) — each with a control that must fail.

Li et al. 2020, Wang et al. 2020, Li, Sahu et al. 2020 (FedProx) and Khaled et al. 2019 were read in their
main texts (issue 40); SCAFFOLD's Theorem III check runs the package's own explicit form (Theorem III prints a
round count); the others are from memory. No verdict here is a finding (none is a violation).
"""

from __future__ import annotations

from .registry import register

__all__ = ["REF"]

REF = (
    "issues 26, 40: Li et al. 2020, Wang et al. 2020, Li, Sahu et al. 2020, Khaled et al. 2019 (read in "
    "their main texts); Karimireddy et al. 2020 (Theorems II, III read; the Theorem III check's explicit "
    "form is the package's own); Lian et al. 2015, Khaled et al. 2020, Stich 2019 (from memory); Yu et al. "
    "2019 (read in the lecture notes)"
)


def _register_self_checked() -> None:
    """One check per paper module that carries its own (``afltheory.published.SELF_CHECKED``): id
    ``published.<module>``, its title the module's first docstring line."""
    from afltheory.published import SELF_CHECKED

    for paper in SELF_CHECKED:
        name = paper.__name__.rsplit(".", 1)[1]
        title = " ".join(paper.__doc__.split("\n\n")[0].split())[:120]

        def check(ctx, _paper=paper):
            return _paper.verify()

        check.__name__ = name
        register(f"published.{name}", title, REF)(check)


_register_self_checked()
