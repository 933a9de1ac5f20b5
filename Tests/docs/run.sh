#!/usr/bin/env bash
# The documentation's generators, without building anything: jobs/manpage.py makes rankings(1)
# from the front page and docs/, and groff (the formatter `man` uses) formats it with every
# warning on and none given; the page and the installed Markdown pages name nothing the package
# does not install; a page that does, or a broken source-only marker, is refused; bold around
# code leaves no raw `**`; jobs/debian/maintainer takes the Maintainer from DEBFULLNAME/DEBEMAIL
# as Debian's tools do. Run by .ci/run; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing groff=groff-base python3=python3 || exit

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
# shellcheck source=Tests/check.sh
source Tests/check.sh
same() { # WHAT ACTUAL EXPECTED
    [[ $2 == "$3" ]] && return 0
    printf '%s: got %q, expected %q\n' "$1" "$2" "$3" >&2
    return 1
}

# --- the man page of this tree ---------------------------------------------------------------
python3 jobs/manpage.py --version 0.0.0 --date 2026-01-01 . >"$work/rankings.1" 2>"$work/err"
check "manpage.py makes the page" same "manpage.py's errors" "$(cat "$work/err")" ""
check "groff formats it without a warning" \
    same "groff warnings" "$(groff -man -Tutf8 -ww -z "$work/rankings.1" 2>&1)" ""
for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" FILES "SEE ALSO"; do
    check "the page has $section" grep -qx ".SH $section" "$work/rankings.1"
done
# *emphasis* is \fI...\fR; a template's "\f" once made the closing font a form feed.
check "no form feed in the page (emphasis closed as a font)" same "lines with a form feed" "$(grep -n $'\f' "$work/rankings.1")" ""
check "no raw ** in the page" same "lines with **" "$(grep -n '\*\*' "$work/rankings.1")" ""
# "**`--dedupe device`**:" in docs/aggregate.md is bold holding code.
check "bold code is bold" grep -qF '\fB\-\-dedupe device\fR:' "$work/rankings.1"
check "the page names nothing outside the package" same "source-tree names" \
    "$(grep -nE 'BENCHMARKS|sample-data/|Tests/|jobs/|/usr/local|README' "$work/rankings.1")" ""
check "FILES is the operator's guide's table" grep -qF '/usr/share/doc/rankings/' "$work/rankings.1"
check "the front page's first code block is the newcomer's two commands" same "README.md's first block" \
    "$(awk '/^```/ { n++; next } n == 1' README.md)" \
    "$(printf '%s\n' 'swift run rankings aggregate sample-data/rating_events.ndjson   # the leaderboard of the bundled sample export' \
        'swift test                                                       # every test')"
check "the front page stays short" test "$(wc -l <README.md)" -le 300

# FILES names every file of the package: the tree jobs/package.sh packs, laid out here by the same
# script with a stand-in binary (a file is named by its path, its directory ending in "/", or its
# name, as the tables do).
man_files=$(sed -n '/^\.SH FILES$/,/^\.SH /p' "$work/rankings.1" | sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\://g')
printf '#!/bin/sh\necho "rankings 0.0.0"\n' >"$work/stand-in"
chmod +x "$work/stand-in"
if jobs/debian/stage-tree.sh "$work/tree" "$work/stand-in" 0.0.0 2026-01-01 2>"$work/err"; then
    unnamed=$(cd "$work/tree" && find . \( -type f -o -type l \) -printf '/%P\n' | sort | while IFS= read -r path; do
        grep -qxF -e "$path" -e "$(dirname -- "$path")/" -e "$(basename -- "$path")" <<<"$man_files" || echo "$path"
    done)
    check "FILES names every file the package installs" same "files FILES does not name" "$unnamed" ""
else
    check "jobs/debian/stage-tree.sh lays out the package" same "its errors" "$(cat "$work/err")" ""
fi
check "FILES names no program 0.5 removed" same "removed programs in FILES" \
    "$(grep -E 'rankings-(fetch|publish)-firestore|rankings-cron' <<<"$man_files")" ""
# `man` shows the page 80 columns wide: no line may be wider, code blocks (which it cannot fill)
# included. Formatted as man does on a terminal; overstriking removed before counting.
check "no line of the formatted page is over 80 columns" same "lines over 80 columns" \
    "$(groff -man -Tutf8 -rLL=80n "$work/rankings.1" 2>/dev/null | python3 -c '
import re, sys
for number, line in enumerate(sys.stdin.read().split("\n"), 1):
    line = re.sub(r".\x08", "", re.sub(r"\x1b\[[0-9;]*m", "", line)).expandtabs()
    if len(line) > 80:
        print(f"{number}: {len(line)}: {line.strip()[:60]}")')" ""

# docs/configuration.md's table of settings is every name rankings-night reads (settings.py's TABLE),
# no more and no fewer: an unknown name is refused with 78, so a missing row hides a setting.
# (Tests/night/test_settings.py holds the same two together; this keeps the check with the docs'.)
accepted=$(python3 -c 'import sys; sys.path.insert(0, "jobs/night")
from rankings_night.settings import TABLE
print("\n".join(TABLE))' | sort)
documented=$(awk '/^## Settings$/ { on = 1; next } on && /^#/ { exit } on' docs/configuration.md |
    sed -n 's/^| `\([A-Z_]*\)` |.*/\1/p' | sort)
check "docs/configuration.md lists exactly the settings rankings-night reads" \
    same "names the night reads missing from the table, and names it does not read" \
    "$(comm -3 <(echo "$accepted") <(echo "$documented") | tr '\t' '+')" ""

# Messages and installed files send the operator to these sections of rankings(1).
for section in "Accepting a drop" "Monitoring: metrics for node_exporter" "The systemd timer" "The night" \
    "Upgrading from 0.4"; do
    check "the page has the section \"$section\" that messages name" grep -qx ".SS $section" "$work/rankings.1"
done
# ...and to pages, whose titles are the page's sections (settings.py's 78, rankings.conf's comments).
for page in "The configuration file" "Firestore: fetch and publish"; do
    check "the page has the section \"$page\" that messages name" grep -qx ".SH ${page^^}" "$work/rankings.1"
done
check "the page has the section \"The guard against shrinking\" that --help names" \
    grep -q '^\.SS The guard against shrinking' "$work/rankings.1"
check "nothing installed sends the operator to the README" same "mentions of the README" \
    "$(grep -rn 'README' Sources/ cron/ jobs/rankings.conf jobs/rankings*.service jobs/rankings.timer jobs/debian/)" ""

# The sample's field table says which options read each field (a newcomer reads it first).
field_row() { grep -F "| \`$1\` |" sample-data/README.md; }
check "sample-data/README.md: week_id is read by --week" grep -q -- '--week' <<<"$(field_row week_id)"
check "sample-data/README.md: timestamp is read by --as-of, --since, --dedupe device" \
    grep -qE -- '--as-of.*--since.*--dedupe device' <<<"$(field_row timestamp)"
check "sample-data/README.md: id is read by --dedupe id" grep -q -- '--dedupe id' <<<"$(field_row id)"
check "sample-data/README.md: device_id is read by --dedupe device" grep -q -- '--dedupe device' <<<"$(field_row device_id)"

# --- the installed pages ---------------------------------------------------------------------
pages=$(python3 jobs/manpage.py --pages .)
check "the operator's guide is installed" grep -qx './docs/operators-guide.md' <<<"$pages"
for page in $pages; do
    python3 jobs/manpage.py --markdown "$page" >"$work/page.md" 2>"$work/err"
    check "$page can be installed" same "manpage.py's errors" "$(cat "$work/err")" ""
    check "$page loses its source-only parts" same "markers left" "$(grep -c 'source-only' "$work/page.md")" "0"
done

# --- what manpage.py refuses -----------------------------------------------------------------
refused() { # TEXT EXPECTED-MESSAGE-PART
    printf '%s\n' "$1" >"$work/bad.md"
    local out
    out=$(python3 jobs/manpage.py --markdown "$work/bad.md" 2>&1 >/dev/null)
    local status=$?
    ((status != 0)) && [[ $out == *"$2"* ]] && return 0
    printf 'status %d, message %q\n' "$status" "$out" >&2
    return 1
}
check "a page naming sample-data/ is refused" refused $'# T\n\nSee `sample-data/x`.' "names 'sample-data/'"
check "a page naming /usr/local is refused" refused $'# T\n\n/usr/local/bin/rankings' "names '/usr/local'"
check "a link to an uninstalled file is refused" refused $'# T\n\n[x](../BENCHMARKS.md)' "names 'BENCHMARKS.md'"
check "a link to a page not installed is refused" refused $'# T\n\n[x](nowhere.md)' "links to nowhere.md"
check "an unclosed source-only block is refused" refused $'# T\n\n<!-- source-only -->\nx' "never closed"
check "a stray end marker is refused" refused $'# T\n\n<!-- /source-only -->' "without its start"
printf '# T\n\nkept\n\n<!-- source-only -->\nsample-data/ here\n<!-- /source-only -->\n\nalso kept\n' >"$work/ok.md"
check "source-only parts are left out, the rest kept" same "the page" \
    "$(python3 jobs/manpage.py --markdown "$work/ok.md")" "$(printf '# T\n\nkept\n\n\nalso kept')"

# --- the package's Maintainer ----------------------------------------------------------------
maintainer() { env -u DEBFULLNAME -u DEBEMAIL "$@" sh jobs/debian/maintainer; }
check "Maintainer without DEBFULLNAME/DEBEMAIL names the project" \
    same "Maintainer" "$(maintainer)" "The rankings project <maintainers@rankings.example>"
check "Maintainer from DEBFULLNAME and DEBEMAIL" \
    same "Maintainer" "$(maintainer DEBFULLNAME='Ann Example' DEBEMAIL=ann@example.org)" "Ann Example <ann@example.org>"
check "Maintainer from DEBEMAIL as Name <address>" \
    same "Maintainer" "$(maintainer DEBEMAIL='Ann Example <ann@example.org>')" "Ann Example <ann@example.org>"
check "DEBFULLNAME names even when DEBEMAIL has a name" \
    same "Maintainer" "$(maintainer DEBFULLNAME=Bo DEBEMAIL='Ann Example <ann@example.org>')" "Bo <ann@example.org>"
check "DEBEMAIL alone, without a name, is not enough" \
    same "Maintainer" "$(maintainer DEBEMAIL=ann@example.org)" "The rankings project <maintainers@rankings.example>"

finish
