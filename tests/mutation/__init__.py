"""Mutation testing of the modules that guard users' work (`make mutate`), and proofs that the
mended tests fail on broken code (`python -m tests.mutation.prove`)."""
