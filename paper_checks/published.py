"""Published FL theorems beyond Yang et al. and Yu et al. (issue 26): the statements of
``afltheory.published`` that the engines can run, verified as ``Claim``s (``afltheory.published.claims``)
through the one entry point ``afltheory.claims.verify`` — exact moments where the model applies, else the
one-sided 99 % t-UCB — each on an instance inside its conditions where its dominant term is attained.

The instances and controls are in ``afltheory.published.instances`` (shared with ``afltheory published``,
the table command); this module registers them as checks, plus one check per paper module that carries its own
(``afltheory.published.SELF_CHECKED``). Li et al. 2020, Wang et al. 2020 and Khaled et al. 2019 were read in
their main texts (issue 40); SCAFFOLD's check runs the package's own explicit form (Theorem III prints a
round count); the others are from memory. No verdict here is a finding (none is a violation).
"""

from __future__ import annotations

from afltheory.published import instances
from afltheory.published.instances import CONTROL_FACTOR

from .registry import register

__all__ = [
    "CONTROL_FACTOR",
    "REF",
    "khaled2020",
    "lian2015",
    "stich2019",
    "yu2019",
]

REF = (
    "issues 26, 40: Li et al. 2020, Wang et al. 2020, Khaled et al. 2019 (read in their main texts); "
    "Karimireddy et al. 2020 (Theorem III read; the check's explicit form is the package's own); Lian et al. "
    "2015, Khaled et al. 2020, Stich 2019 (from memory); Yu et al. 2019 (read in the lecture notes)"
)


@register("published.lian2015", "Lian et al. 2015 Thm 1 (AsySG-con, nonconvex): noise and delay terms", REF)
def lian2015(ctx):
    return instances.lian2015()


@register("published.khaled2020", "Khaled et al. 2020, identical data (local SGD): noise term", REF)
def khaled2020(ctx):
    return instances.khaled2020()


@register(
    "published.stich2019", "Stich 2019 Thm 2.2 (local SGD, H = 1): init term of the weighted average", REF
)
def stich2019(ctx):
    return instances.stich2019()


@register(
    "published.yu2019",
    "Yu et al. 2019 Thm 1 and corollary (local SGD, nonconvex, K = 1): bound and rate T^(-1/2)",
    REF,
)
def yu2019(ctx):
    return instances.yu2019()


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
