# Debian's package checker, on the host: errors and warnings fail the check (there are none to
# keep: the links are relative, every command has its page); its informational notes are about
# how the Swift toolchain links (docs/development.md, "Build the package and test it").

lintian_finds_no_errors_or_warnings() {
    lintian --fail-on error,warning "$deb"
}
check "lintian reports no errors and no warnings" lintian_finds_no_errors_or_warnings
