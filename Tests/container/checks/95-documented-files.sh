# Documented once, in docs/operators-guide.md, and tested: its table of what the package installs
# must name every file in the package (a file, its directory ending in "/", or its name in the table).

guide_lists_every_packaged_file() {
    local table path missing=0
    table=$(awk '/^#+ What the package installs$/ { on = 1; next } on && /^#/ { exit } on && /^\|/' "$repo/docs/operators-guide.md")
    [[ -n $table ]]
    for path in $(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./\(.*[^/]\)$|/\1|p'); do
        if [[ $table == *"\`$path\`"* || $table == *"\`$(dirname -- "$path")/\`"* || $table == *"\`$(basename -- "$path")\`"* ]]; then
            continue
        fi
        echo "not in docs/operators-guide.md's table: $path"
        missing=1
    done
    ((missing == 0))
}
check "docs/operators-guide.md's table lists every file the package installs" guide_lists_every_packaged_file
