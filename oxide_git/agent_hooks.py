"""``python -m oxide_git.agent_hooks``, as agents' settings written by earlier versions
run it: now ``oxide_git.hooks.agent_hooks`` (compatibility: an old public path)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("oxide_git.hooks.agent_hooks", run_name="__main__", alter_sys=True)
