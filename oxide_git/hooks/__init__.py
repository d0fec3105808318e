"""Git hook shims and the agents' own hooks: installing them and what they run."""
