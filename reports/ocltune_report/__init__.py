"""ocltune report generator: benchmark results + tuning database + history -> HTML with plots."""
