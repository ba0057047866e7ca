#!/usr/bin/env bash
# test_doc_links.sh SOURCE_DIR: the Markdown of docs/, README.md and nets/README.md links
# only to files and #anchors that exist (relative links; web addresses are not fetched),
# every page of docs/experiments/ is in its index, and docs/results.md keeps the markers
# that scripts/bench/learning.sh --write-docs writes between.
set -u
exec python3 - "${1:-.}" <<'PY'
import glob, os, re, sys
os.chdir(sys.argv[1])

def slug(h):  # GitHub's heading anchors
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h.strip()).lower()
    return re.sub(r'[^\w\- ]', '', h).replace(' ', '-')

cache = {}
def anchors(path):
    if path not in cache:
        seen, out, fence = {}, set(), False
        for line in open(path, encoding='utf-8'):
            if line.startswith('```'):
                fence = not fence
                continue
            m = not fence and re.match(r'#{1,6} (.*)', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else '%s-%d' % (s, n))
            out.update(re.findall(r'<a (?:name|id)="([^"]+)"', line))
        cache[path] = out
    return cache[path]

bad = []
files = sorted(glob.glob('docs/**/*.md', recursive=True)) + ['README.md', 'nets/README.md']
for f in files:
    fence = False
    for n, line in enumerate(open(f, encoding='utf-8'), 1):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence:
            continue
        for target in re.findall(r'\]\(([^)\s]+)\)', re.sub(r'`[^`]*`', '', line)):
            if re.match(r'[a-z]+:', target):
                continue
            path, _, frag = target.partition('#')
            p = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(p):
                bad.append('%s:%d: no such file: %s' % (f, n, target))
            elif frag and p.endswith('.md') and frag not in anchors(p):
                bad.append('%s:%d: no heading for #%s in %s' % (f, n, frag, p))

index = open('docs/experiments/README.md', encoding='utf-8').read()
for p in sorted(glob.glob('docs/experiments/*.md')):
    name = os.path.basename(p)
    if name != 'README.md' and '](%s)' % name not in index:
        bad.append('docs/experiments/README.md: %s is not in the index' % name)

results = open('docs/results.md', encoding='utf-8').read()
for marker in ('<!-- learning:begin -->', '<!-- learning:end -->'):
    if results.count(marker) != 1:
        bad.append('docs/results.md: %s should appear once (learning_report.py --write-docs)' % marker)

for b in bad:
    print('FAIL ' + b)
print('%d Markdown files checked, %d problems' % (len(files), len(bad)))
sys.exit(1 if bad else 0)
PY
