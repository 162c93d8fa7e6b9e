"""The shipped schedule warehouse: one TOML pattern per file (docs/plan.md, "Warehouse")."""
