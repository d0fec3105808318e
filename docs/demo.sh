#!/usr/bin/env bash
# make demo: the main job of git oxide on bundled data, told as a story, in a temporary repository.
# Sessions of all four agents are placed in temporary agent stores (nothing of yours is read or
# written), discovered and imported, then read, checkpointed, rewound, undone, forked, resumed in
# another agent, exported and shared with a second clone. Each step shows its command, as you
# would type it, and the start of its output.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
demo="$(mktemp -d "${TMPDIR:-/tmp}/oxide-demo.XXXXXX")"
export HOME="$demo/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$demo/home/.gitconfig"
export CLAUDE_CONFIG_DIR="$HOME/.claude" CODEX_HOME="$HOME/.codex" XDG_DATA_HOME="$HOME/.local/share"
mkdir -p "$HOME" && : > "$GIT_CONFIG_GLOBAL"
git config --global user.name "Demo User" && git config --global user.email demo@example.com
repo="$demo/shop"

MAX_LINES=14
say() { printf '\n\033[1;34m## %s\033[0m\n' "$*"; }
quote() {  # one word as a shell reads it back: bare when safe, else in single quotes
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then printf '%s' "$1"
  else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
show() {  # the command as you would paste it
  local out="" word
  for word in "$@"; do out+="${out:+ }$(quote "$word")"; done
  printf '\033[1m$ %s\033[0m\n' "$out"
}
clip() { awk -v max="$MAX_LINES" 'NR <= max { print } END { if (NR > max) printf "  … (%d more lines)\n", NR - max }'; }
step() { show "$@"; "$@" 2>&1 | clip; }  # the command, then the start of what it printed

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

say "A shop repository; four agents worked on it. Bring their sessions into its git."
step git oxide init
step git oxide import --dry-run
step git oxide import
step git oxide import          # again: nothing new, nothing duplicated
step git oxide list
sid=$(git oxide list --json | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["agent"]=="codex"][0])')
short=$(git oxide list | awk -v id="$sid" 'index(id, $1) == 1 { print $1 }')  # the id as listed

say "Read one: prompts and answers, each tool call on one line, long output folded. Search them all."
step git oxide show "$short"
step git oxide search "test"

say "A checkpoint: the whole worktree as a commit on a hidden ref (HEAD, index, branches untouched)."
printf 'def total(items):\n    return round(sum(items), 2)\n' > src/cart.py
show git oxide checkpoint -m "before the refactor"
cp_id=$(git oxide checkpoint -m "before the refactor" 2>"$demo/checkpoint.err")
clip < "$demo/checkpoint.err"
echo "$cp_id"
cp_short=$(git oxide checkpoints | awk -v id="$cp_id" 'index(id, $1) == 1 { print $1 }')

say "Then an agent breaks the code. See what a rewind would do (a dry run writes nothing), and do it."
printf 'def total(items):\n    raise NotImplementedError\n' > src/cart.py
echo "scratch" > notes.txt
step git oxide checkpoints
step git oxide rewind "$cp_short" --code --dry-run
step git oxide rewind "$cp_short" --code --yes
step cat src/cart.py

say "Changed your mind: undo names what it undoes (on a terminal it asks; here --yes)."
step git oxide undo --yes
step cat src/cart.py
step git status --short      # your index, HEAD and branches were never touched

say "Fork the Codex session before its first answer (#3: the numbers show prints), and continue it in Claude Code."
step git oxide fork "$short" --at 3 --title "try another approach"
step git oxide list --tree
step git oxide status        # which session checkpoints and commit notes attach to, and why
step git oxide resume "$short" --format markdown
step git oxide resume "$short" --into claude
step git oxide export "$short" --format html -o "$demo/session.html"
step git oxide memory add conventions "Money is rounded to cents in total()."
step git oxide memory show

say "Share through any git remote (a bare repository stands in for the team's server)."
git init -q --bare -b main "$demo/team.git"
git remote add origin "$demo/team.git"
git push -q origin main
step git oxide push origin
colleague="$demo/colleague"
git clone -q "$demo/team.git" "$colleague"
say "On a colleague's machine: a second clone of the project, $colleague"
(cd "$colleague" && step git oxide pull origin && step git oxide list --all)

say "Housekeeping: what gc would remove, a check of the store, and git's own check."
step git oxide gc --dry-run
step git oxide doctor
step git fsck --full --no-progress
printf '\n\033[1mThe demo repository is %s; its HTML export is %s\033[0m\n' "$repo" "$demo/session.html"
cat <<'NEXT'

What to try next, in your own repository:
  git oxide init && git oxide import       # your agents' sessions of this repository
  git oxide resume                         # pick one (arrows, type to filter) and continue it in any agent
  git oxide hooks install                  # a checkpoint at each commit
  git oxide init --agent-hooks claude      # ...and at each prompt you give Claude Code
  git log --exclude='refs/oxide/*' --all   # your history without oxide's commits (README: "git log --all")
NEXT
