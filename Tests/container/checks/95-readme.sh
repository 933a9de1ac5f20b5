# Documented once, in README.md (and docs/*.md), and tested: the tables headed "What the package
# installs" must together name every file in the package (a file, its directory ending in "/",
# or its name in a table).

readme_lists_every_packaged_file() {
    local table path missing=0
    table=$(for doc in "$repo/README.md" "$repo"/docs/*.md; do
        if [[ -e $doc ]]; then awk '/^#+ What the package installs$/ { on = 1; next } on && /^#/ { exit } on && /^\|/' "$doc"; fi
    done)
    [[ -n $table ]]
    for path in $(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./\(.*[^/]\)$|/\1|p'); do
        if [[ $table == *"\`$path\`"* || $table == *"\`$(dirname -- "$path")/\`"* || $table == *"\`$(basename -- "$path")\`"* ]]; then
            continue
        fi
        echo "in no table of README.md or docs/*.md: $path"
        missing=1
    done
    ((missing == 0))
}
check "README.md's table lists every file the package installs" readme_lists_every_packaged_file
