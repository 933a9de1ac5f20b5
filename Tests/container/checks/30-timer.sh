# The timer under the real systemd, on a machine whose own zone is UTC.

next_run_is_new_york_midnight() {
    expect "machine zone" "$(in_container readlink -f /etc/localtime)" "/usr/share/zoneinfo/Etc/UTC"
    in_container systemctl start rankings.timer
    local utc new_york
    utc=$(in_container systemctl list-timers --no-legend rankings.timer)
    new_york=$(in_container env TZ=America/New_York systemctl list-timers --no-legend rankings.timer)
    in_container systemctl stop rankings.timer
    echo "UTC: $utc"
    echo "New York: $new_york"
    # NEXT is the first column: "Mon 2026-11-23 05:00:00 UTC" (04:00 in summer time).
    [[ $new_york =~ ^[A-Z][a-z][a-z]\ [0-9-]{10}\ 00:00:00\ E[SD]T\  ]]
    [[ $utc =~ ^[A-Z][a-z][a-z]\ [0-9-]{10}\ 0[45]:00:00\ UTC\  ]]
    [[ $utc == *" rankings.timer "*"rankings.service"* ]]
}
check "systemctl list-timers shows the next run at 00:00 America/New_York" next_run_is_new_york_midnight
