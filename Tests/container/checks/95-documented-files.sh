# Documented once, in the docs/ pages, and tested: the tables headed "What the package installs"
# (the operator's guide's, and any page that adds files) must together name every file in the
# package (a file, its directory ending in "/", or its name in a table).

guide_lists_every_packaged_file() {
    local table path missing=0
    table=$(for doc in "$repo"/docs/*.md; do
        awk '/^#+ What the package installs$/ { on = 1; next } on && /^#/ { exit } on && /^\|/' "$doc"
    done)
    [[ -n $table ]]
    for path in $(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./\(.*[^/]\)$|/\1|p'); do
        if [[ $table == *"\`$path\`"* || $table == *"\`$(dirname -- "$path")/\`"* || $table == *"\`$(basename -- "$path")\`"* ]]; then
            continue
        fi
        echo "in no docs/ table of what the package installs: $path"
        missing=1
    done
    ((missing == 0))
}
check "the docs' tables list every file the package installs" guide_lists_every_packaged_file
