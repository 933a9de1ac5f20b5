# Debian's package checker, on the host: errors fail the check; docs/development.md ("Build the package
# and test it") explains the warnings that are kept.

lintian_finds_no_errors() {
    lintian --fail-on error "$deb"
}
check "lintian reports no errors" lintian_finds_no_errors
