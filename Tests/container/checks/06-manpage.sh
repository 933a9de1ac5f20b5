# The man page the package ships (made from README.md by jobs/manpage.py), on the host: groff
# formats it without a warning, and it has the sections a man page of a command must have.

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
