"""``python -m oxide_git.hook_impl``, as git hook shims installed by earlier versions
run it: now ``oxide_git.hooks.impl`` (compatibility: an old public path)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("oxide_git.hooks.impl", run_name="__main__", alter_sys=True)
