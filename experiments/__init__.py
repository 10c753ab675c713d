"""The paper's experiment drivers, outside the library: the real-data experiments [Yang et al. 2022,
App. E] (``experiments.real_data``) and their ``afltheory real`` subcommand (``experiments.cli``, registered
through the entry-point group ``afltheory.commands``). The TOML files next to this package are sweep specs
(``afltheory sweep run experiments/SPEC.toml``). ``afltheory`` never imports this package."""

__all__: list[str] = []
