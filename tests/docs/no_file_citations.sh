#!/usr/bin/env bash
# The product names its source documents by what they are ("the CK wrapper GEMM tutorial", "AMD's
# note on LDS bank conflicts"), never by a file name or number a reader does not have: no
# "seed 004", no seed file names, no paths outside the repository (../shared/...).
# usage: no_file_citations.sh SOURCE_DIR      exit 1 listing every citation found
set -uo pipefail
src=${1:?usage: $0 SOURCE_DIR}
cd "$src" || exit 2
self=tests/docs/no_file_citations.sh
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard | grep -vxF "$self")
else
  files=$(find . -type f -not -path './.git/*' -not -path './build*' | sed 's|^\./||' | grep -vxF "$self")
fi
pattern='seeds?[ _-]?0[0-9]{2}|seed'"'"'s|\.\./shared|shared/(reference|seeds)|[0-9]{3}_[0-9a-f]{16}\.txt|(amd_gpu|nvidia_gpu|ck_tile|cute_layouts|iree_nested_layout|gpu_host|peers)\.md'
# -I: binary files (corpora, results) are not prose
hits=$(printf '%s\n' "$files" | while IFS= read -r f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
       xargs -0 grep -nIiE "$pattern" -- 2>/dev/null)
if [ -n "$hits" ]; then
  echo "citations of files a reader does not have (name the document by what it is, with its public link):"
  echo "$hits"
  exit 1
fi
echo "no file-number or out-of-tree citations in $(printf '%s\n' "$files" | wc -l) files"
