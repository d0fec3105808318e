#!/usr/bin/env bash
# make demo: the main job of git oxide on bundled data, in a temporary repository.
# Sessions of all four agents are placed in temporary agent stores (nothing of yours is read or
# written), discovered and imported, then checkpoint, fork, rewind, undo, resume and export.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
demo="$(mktemp -d "${TMPDIR:-/tmp}/oxide-demo.XXXXXX")"
export HOME="$demo/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$demo/home/.gitconfig"
export CLAUDE_CONFIG_DIR="$HOME/.claude" CODEX_HOME="$HOME/.codex" XDG_DATA_HOME="$HOME/.local/share"
mkdir -p "$HOME" && : > "$GIT_CONFIG_GLOBAL"
git config --global user.name "Demo User" && git config --global user.email demo@example.com
repo="$demo/shop"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

mkdir -p "$repo/src" && cd "$repo"
git init -q -b main
printf 'def total(items):\n    return sum(items)\n' > src/cart.py
printf '# shop\n' > README.md
git add -A && git commit -qm "initial shop"

# The agents' own stores, as the agents would have left them (cwd = this repository).
mkdir -p "$CLAUDE_CONFIG_DIR/projects/demo" "$CODEX_HOME/sessions/2026/01/01" "$XDG_DATA_HOME/opencode"
sed "s#/work/project#$repo#g" "$here/fixtures/claude/split_response.jsonl" \
  > "$CLAUDE_CONFIG_DIR/projects/demo/10000000-0000-4000-8000-000000000001.jsonl"
sed "s#/work/proj#$repo#g" "$here/fixtures/codex/turns.jsonl" \
  > "$CODEX_HOME/sessions/2026/01/01/rollout-2026-01-01T10-00-00-demo.jsonl"
cp -r "$here/fixtures/opencode/storage" "$XDG_DATA_HOME/opencode/storage"
grep -rl /home/dev/proj "$XDG_DATA_HOME/opencode/storage" | xargs sed -i "s#/home/dev/proj#$repo#g"
cp "$here/fixtures/aider/tokens.md" "$repo/.aider.chat.history.md"
echo ".aider*" >> .git/info/exclude

step git oxide init
step git oxide import --dry-run
step git oxide import
step git oxide import          # again: nothing new, nothing duplicated
step git oxide list
sid=$(git oxide list --json | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["agent"]=="codex"][0])')
step git oxide show "${sid:0:12}"
step git oxide search "test"

# A checkpoint, then an "agent" edits the code; rewind restores it, undo brings the edit back.
printf 'def total(items):\n    return round(sum(items), 2)\n' > src/cart.py
cp_id=$(git oxide checkpoint -m "before the refactor")
printf 'def total(items):\n    raise NotImplementedError\n' > src/cart.py
echo "scratch" > notes.txt
step git oxide checkpoints
step git oxide rewind "${cp_id:0:12}" --code --dry-run
step git oxide rewind "${cp_id:0:12}" --code --yes
step cat src/cart.py
step git oxide undo
step cat src/cart.py
step git status --short      # your index, HEAD and branches were never touched

step git oxide fork "${sid:0:12}" --at 2 --title "try another approach"
step git oxide list --tree
step git oxide resume --last --format markdown
step git oxide resume "${sid:0:12}" --into claude
if git oxide export -h >/dev/null 2>&1; then
  step git oxide export "${sid:0:12}" --format markdown -o "$demo/session.md"
  step git oxide export "${sid:0:12}" --format html -o "$demo/session.html"
fi
step git oxide memory add conventions "Money is rounded to cents in total()."
step git oxide memory show

# Share through any git remote: a bare repository stands in for the team's server.
git init -q --bare -b main "$demo/team.git"
git remote add origin "$demo/team.git"
git push -q origin main
step git oxide push origin
git clone -q "$demo/team.git" "$demo/colleague"
(cd "$demo/colleague" && step git oxide pull origin && step git oxide list --all)

step git oxide gc --dry-run
step git oxide doctor
step git fsck --full --no-progress
printf '\nDemo repository left in %s\n' "$repo"
