# The man page and the documentation the package ships (made from docs/ by jobs/manpage.py), on
# the host: groff formats the page without a warning, it has the sections a man page of a command
# must have, every command and every page the units name has it, and neither it nor the installed
# pages send the reader to the source tree.

man_page_formats_cleanly() {
    local page warnings
    page=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/man/man1/rankings.1.gz | gzip -d)
    warnings=$(printf '%s\n' "$page" | groff -man -Tutf8 -ww -z 2>&1)
    expect "groff warnings" "$warnings" ""
    local section
    for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" FILES; do
        grep -qx ".SH $section" <<<"$page" || { echo "no $section section"; return 1; }
    done
}
check "the man page formats without warnings and has NAME, SYNOPSIS, DESCRIPTION, EXIT STATUS, FILES" man_page_formats_cleanly

installed_docs_stand_alone() {
    local tree found
    tree=$(mktemp -d)
    dpkg-deb -x "$deb" "$tree"
    gzip -d "$tree"/usr/share/man/man1/rankings.1.gz "$tree"/usr/share/doc/rankings/*.md.gz
    [[ -f $tree/usr/share/doc/rankings/operators-guide.md ]] || { echo "no operators-guide.md"; rm -rf -- "$tree"; return 1; }
    # Markdown's own ** is fine in the .md files; in roff it is bold the generator missed.
    found=$(grep -nE 'BENCHMARKS|sample-data/|Tests/|jobs/|/usr/local|README' \
        "$tree"/usr/share/man/man1/rankings.1 "$tree"/usr/share/doc/rankings/*.md || true
        grep -n '\*\*' "$tree"/usr/share/man/man1/rankings.1 || true)
    rm -rf -- "$tree"
    expect "references to the source tree" "$found" ""
}
check "the man page and /usr/share/doc/rankings/ name nothing outside the package" installed_docs_stand_alone

every_command_and_unit_has_its_page() {
    local tree missing=0 command reference name section
    tree=$(mktemp -d)
    dpkg-deb -x "$deb" "$tree"
    # What an operator types (man rankings-night), and what `systemctl help rankings.service` opens.
    for command in "$tree"/usr/bin/*; do
        [[ -e $tree/usr/share/man/man1/$(basename -- "$command").1.gz ]] || { echo "no page for ${command#"$tree"}"; missing=1; }
    done
    for reference in $(sed -n 's/^Documentation=//p' "$tree"/lib/systemd/system/rankings.*); do
        name=${reference#man:}
        section=${name#*(}
        section=${section%)}
        name=${name%(*}
        [[ -e $tree/usr/share/man/man$section/$name.$section.gz ]] || { echo "Documentation=$reference: no such page in the package"; missing=1; }
    done
    rm -rf -- "$tree"
    ((missing == 0))
}
check "every command in /usr/bin, and every man: page of the units, is in the package" every_command_and_unit_has_its_page
