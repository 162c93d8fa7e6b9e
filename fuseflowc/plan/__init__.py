"""The planner: fusion regions, orders and schedules chosen by estimated cost (docs/plan.md)."""
