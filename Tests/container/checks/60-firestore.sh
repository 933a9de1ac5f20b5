# Sourced by Tests/container/run.sh: the whole night with the shipped Firestore fetch and publish,
# against Google's emulator (a host process in the container's network namespace, see run.sh):
# fetch, job, publish as steps of one start of rankings.service, and as cron runs them (the
# rankings-cron shim that 0.3's entries name: the night without New York's hour gate); with the
# emulator stopped (SIGSTOP: it keeps its data but answers nothing), the night fails at the fetch
# after its tries, and neither the fetched folder nor the document nor Firestore's copy changes;
# with the emulator refusing the publish, the night fails with 69 and says so.
#
# The job reads what the fetch left (/var/lib/rankings/firestore/current, Firestore's typed
# Document lines); the emulator is seeded with the sample's events, so the document is the
# sample's.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.
# RANKINGS_CONTAINER_EVIDENCE=DIR keeps the journals of the runs.

firestore_project=demo-rankings-container
firestore_fetched=/var/lib/rankings/firestore

firestore_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    in_container_sh '
        install -d -m 0755 /srv/rankings/exports
        # mkdir, not install -d: a chmod of the existing directory would narrow its ACL mask.
        mkdir -p /var/lib/prometheus/node-exporter
        systemd-tmpfiles --create rankings.conf
        rm -rf /var/lib/rankings/all_time.json '"$firestore_fetched"' /var/lib/prometheus/node-exporter/*.prom
        # Few tries inside each call and 1 s between the night'"'"'s tries, so four tries of a fetch
        # against a stopped emulator take seconds (the shipped defaults: 5 calls, 300 s).
        sed -i "/^RANKINGS_RETRY_PAUSE_SECONDS=/d" /etc/rankings.conf
        printf "%s\n" RANKINGS_FIRESTORE_ATTEMPTS=2 RANKINGS_FIRESTORE_BACKOFF_SECONDS=0.2 \
            RANKINGS_RETRY_PAUSE_SECONDS=1 >>/etc/rankings.conf'
    set_config RANKINGS_EXPORTS "$firestore_fetched/current"
    set_config RANKINGS_OUTPUT /var/lib/rankings/all_time.json
    set_config RANKINGS_FLAGS '"--computed-at 2026-02-18T05:00:00Z"'
    set_config RANKINGS_METRICS /var/lib/prometheus/node-exporter/rankings.prom
    set_config RANKINGS_FETCH "\"/usr/libexec/rankings-fetch-firestore $firestore_fetched\""
    set_config RANKINGS_PUBLISH /usr/libexec/rankings-publish-firestore
    set_config RANKINGS_FIRESTORE_PROJECT "$firestore_project"
    set_config FIRESTORE_EMULATOR_HOST "$emulator"
    in_container systemctl reset-failed 2>/dev/null || true
    start_emulator
    expect "events seeded" "$(emulator_client "$firestore_project" seed "$repo/sample-data/rating_events.ndjson")" 5000
}
check "firestore: the emulator seeded with the sample's 5000 events, the package configured for it" firestore_setup

firestore_show() { emulator_client "$firestore_project" show weekly_rankings all_time; }
firestore_update_time() { firestore_show | awk -F'"' '$2 == "update_time" { print $4 }'; }
firestore_state() { in_container systemctl show -P "$1" rankings.service; }
firestore_metric() { in_container awk -v k="$2" '$1 == k { print $2 }' "/var/lib/prometheus/node-exporter/$1"; }
firestore_steps() {
    local step
    for step in fetch aggregate publish; do
        printf '%s=%s/%s ' "$step" "$(firestore_metric rankings-night.prom "rankings_night_step_exit_status{step=\"$step\"}")" \
            "$(firestore_metric rankings-night.prom "rankings_night_step_tries{step=\"$step\"}")"
    done
}
# The lines of the night started since $night_since, as `journalctl -t rankings` shows them.
firestore_journal() { night_lines "$night_since"; }
# The lines tagged rankings since the Unix time $1 (a night under cron logs to syslog).
firestore_journal_since() { journal_lines "$night_end" --since "@$1"; }
# What the night said of its steps, in order: "fetch:try fetch:done aggregate:try ...".
firestore_step_words() {
    sed -n 's/^rankings-night: \(fetch\|aggregate\|publish\): \(try\|done\|failed\).*/\1:\2/p' | tr '\n' ' '
}
# A stopped emulator accepts connections and never answers: each call waits for its timeout,
# 2 s while the emulator is stopped (the shipped 60 s otherwise; a first page can take seconds).
firestore_short_timeout() { in_container_sh 'echo RANKINGS_FIRESTORE_TIMEOUT_SECONDS=2 >>/etc/rankings.conf'; }
firestore_default_timeout() { in_container sed -i '/^RANKINGS_FIRESTORE_TIMEOUT_SECONDS=/d' /etc/rankings.conf; }
firestore_reset() {
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}
firestore_evidence() {
    if [[ -n ${RANKINGS_CONTAINER_EVIDENCE:-} ]]; then
        mkdir -p -- "$RANKINGS_CONTAINER_EVIDENCE"
        cat >"$RANKINGS_CONTAINER_EVIDENCE/$1"
    else
        cat >/dev/null
    fi
}
# The shim as 0.3's /etc/cron.d/rankings ran it, as cron does: user rankings, no terminal.
firestore_cron() { in_container runuser -u rankings -- /usr/libexec/rankings-cron /etc/rankings.conf </dev/null; }

firestore_systemd_chain() {
    local night_since
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    expect "result" "$(firestore_state Result)" success
    expect "events fetched" "$(in_container_sh "wc -l <$firestore_fetched/current/rating_events.ndjson")" 5000
    expect "fetched folder owner" "$(in_container stat -c %U "$firestore_fetched/current/")" rankings
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    emulator_client "$firestore_project" matches weekly_rankings all_time "$repo/sample-data/expected/all_time.json"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 0
    expect "steps (status/tries)" "$(firestore_steps)" "fetch=0/1 aggregate=0/1 publish=0/1 "
    # journalctl -t rankings: the night's lines, in order, and every step's own.
    local log
    log=$(firestore_journal)
    echo "$log"
    expect "the night's steps" "$(firestore_step_words <<<"$log")" \
        "fetch:try fetch:done aggregate:try aggregate:done publish:try publish:done "
    grep -q '^rankings-night: night starting (systemd; ' <<<"$log"
    grep -q '^rankings-fetch-firestore: rest: ' <<<"$log"
    grep -q '^rankings: 5000 events ' <<<"$log"
    grep -q "^rankings-publish-firestore: wrote projects/$firestore_project/databases/(default)/documents/weekly_rankings/all_time " <<<"$log"
    grep -q '^rankings-night: night done: the boards are written and published ' <<<"$log"
    firestore_journal | firestore_evidence systemd-chain.journal
    firestore_show | firestore_evidence systemd-chain.document
}
check "systemd: one start runs fetch, job, publish in order (journalctl -t rankings); the emulator holds weekly_rankings/all_time" \
    firestore_systemd_chain

firestore_incremental_night() {
    # A second night after one new vote: only that vote is read, merged into the first night's
    # snapshot, and the document published is the one a full read of the collection gives.
    emulator_client "$firestore_project" vote rating_events zz-container-vote
    in_container systemctl start rankings.service
    expect "result" "$(firestore_state Result)" success
    expect "night" "$(in_container python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["mode"], r["documents_read"], r["snapshot_documents"])' \
        "$firestore_fetched/current/.night.json")" "incremental 1 5001"
    expect "documents read (metric)" "$(firestore_metric rankings-fetch.prom rankings_fetch_documents_read)" 1
    expect "full (metric)" "$(firestore_metric rankings-fetch.prom rankings_fetch_full)" 0
    in_container runuser -u rankings -- env RANKINGS_FIRESTORE_PROJECT="$firestore_project" \
        FIRESTORE_EMULATOR_HOST="$emulator" RANKINGS_FIRESTORE_INCREMENTAL=no \
        /usr/libexec/rankings-fetch-firestore /var/lib/rankings/full-read 2>/dev/null
    in_container rankings aggregate --computed-at 2026-02-18T05:00:00Z /var/lib/rankings/full-read/current \
        >"$share/full-read.json"
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/full-read.json"
    cmp -s "$share/full-read.json" "$share/all_time.json" && return 1   # the new vote shows
    emulator_client "$firestore_project" matches weekly_rankings all_time "$share/full-read.json"
    # Back to the sample's events for the checks after this one (the next night reads in full:
    # a deletion leaves the merged snapshot one over Firestore's count).
    emulator_client "$firestore_project" delete rating_events zz-container-vote
    in_container rm -rf /var/lib/rankings/full-read
}
check "systemd: a second night reads only the new vote (incremental) and publishes what a full read gives" \
    firestore_incremental_night

firestore_systemd_failed_fetch() {
    local current document updated last_success night_success status=0 night_since
    current=$(in_container readlink "$firestore_fetched/current")
    document=$(in_container sha256sum /var/lib/rankings/all_time.json)
    updated=$(firestore_update_time)
    last_success=$(firestore_metric rankings.prom rankings_last_success_timestamp_seconds)
    night_success=$(firestore_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)
    freeze_emulator
    firestore_short_timeout
    night_since=$(in_container date +%s)
    # One start: systemctl returns once the fetch's last try failed.
    in_container systemctl start rankings.service || status=$?
    firestore_default_timeout
    thaw_emulator
    ((status != 0))
    expect "exit status" "$(firestore_state ExecMainStatus)" 69
    # What an operator sees first: the failure, not the last good night.
    expect "systemctl status" "$(in_container systemctl status --no-pager rankings.service | sed -n 's/^ *Active: \([a-z]*\).*/\1/p')" failed
    in_container systemctl --failed --plain --no-legend | grep '^rankings.service ' >/dev/null
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "document" "$(in_container sha256sum /var/lib/rankings/all_time.json)" "$document"
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 69
    expect "the job's last success" "$(firestore_metric rankings.prom rankings_last_success_timestamp_seconds)" "$last_success"
    expect "the night's exit status" "$(firestore_metric rankings-night.prom rankings_night_last_run_exit_status)" 69
    expect "the night's last success" "$(firestore_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)" "$night_success"
    expect "steps (status/tries)" "$(firestore_steps)" "fetch=69/4 aggregate=-1/0 publish=-1/0 "
    local log
    log=$(firestore_journal)
    echo "$log"
    expect "fetch tries" "$(grep -c '^rankings-fetch-firestore: error: ' <<<"$log")" 4
    expect "the night's steps" "$(firestore_step_words <<<"$log")" \
        "fetch:try fetch:failed fetch:try fetch:failed fetch:try fetch:failed fetch:try fetch:failed "
    expect "tries again" "$(grep -c '; trying again in 1s$' <<<"$log")" 3
    expect "gives up" "$(grep -c '^rankings-night: fetch: failed with status 69 (unavailable) on try 4; no tries left$' <<<"$log")" 1
    firestore_journal | firestore_evidence systemd-failed-fetch.journal
    firestore_reset
}
check "systemd: emulator stopped, the fetch fails 4 times in one start, 69 in systemctl status and the metrics; job, publish, current, document, Firestore untouched" \
    firestore_systemd_failed_fetch

# Firestore refusing the write (a reserved collection id: 400 INVALID_ARGUMENT from the emulator):
# the board is written, but the app never sees it, and the night must say so.
firestore_publish_refused() {
    local updated night_success status=0 night_since
    updated=$(firestore_update_time)
    night_success=$(firestore_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)
    in_container_sh 'echo RANKINGS_FIRESTORE_COLLECTION=__refused__ >>/etc/rankings.conf'
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service || status=$?
    in_container sed -i '/^RANKINGS_FIRESTORE_COLLECTION=/d' /etc/rankings.conf
    firestore_journal
    ((status != 0))
    expect "exit status" "$(firestore_state ExecMainStatus)" 69
    expect "systemctl status" "$(in_container systemctl status --no-pager rankings.service | sed -n 's/^ *Active: \([a-z]*\).*/\1/p')" failed
    expect "the night's exit status" "$(firestore_metric rankings-night.prom rankings_night_last_run_exit_status)" 69
    expect "the night's last success" "$(firestore_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)" "$night_success"
    expect "steps (status/tries)" "$(firestore_steps)" "fetch=0/1 aggregate=0/1 publish=69/4 "
    firestore_journal | grep 'rankings-publish-firestore: error: .*reserved' >/dev/null
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    firestore_reset
}
check "systemd: the emulator refusing the publish: the night exits 69, systemctl status failed, rankings-night.prom says 69 for the night and the publish" \
    firestore_publish_refused

firestore_cron_chain() {
    # Gone first, so that the publish shows: Firestore keeps a document's update time when a
    # write leaves its content as it was, and systemd's night published the same document.
    emulator_client "$firestore_project" delete weekly_rankings all_time
    expect "deleted" "$(firestore_show | tr -d ' \n')" '{"exists":false}'
    in_container rm -f /var/lib/rankings/all_time.json
    local since
    since=$(in_container date +%s)
    sleep 1
    firestore_cron
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    local log
    log=$(firestore_journal_since "$since")
    echo "$log"
    expect "the night's steps" "$(firestore_step_words <<<"$log")" \
        "fetch:try fetch:done aggregate:try aggregate:done publish:try publish:done "
    grep -q '^rankings-night: night starting (cron; ' <<<"$log"
    emulator_client "$firestore_project" matches weekly_rankings all_time "$repo/sample-data/expected/all_time.json"
    firestore_journal_since "$since" | firestore_evidence cron-chain.log
}
check "cron: the shim runs fetch, job, publish in order (syslog, tag rankings), and the emulator holds weekly_rankings/all_time" \
    firestore_cron_chain

firestore_cron_failed_fetch() {
    local current document updated status=0 since
    current=$(in_container readlink "$firestore_fetched/current")
    document=$(in_container sha256sum /var/lib/rankings/all_time.json)
    updated=$(firestore_update_time)
    since=$(in_container date +%s)
    sleep 1
    freeze_emulator
    firestore_short_timeout
    firestore_cron || status=$?
    firestore_default_timeout
    thaw_emulator
    local log
    log=$(firestore_journal_since "$since")
    echo "$log"
    expect "exit status" "$status" 69
    expect "fetch tries" "$(grep -c '^rankings-night: fetch: try ' <<<"$log")" 4
    expect "job runs" "$(grep -c '^rankings-night: aggregate: try ' <<<"$log" || true)" 0
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "document" "$(in_container sha256sum /var/lib/rankings/all_time.json)" "$document"
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    firestore_journal_since "$since" | firestore_evidence cron-failed-fetch.log
}
check "cron: emulator stopped, the fetch is tried 4 times, 69; job, current, document and Firestore untouched" \
    firestore_cron_failed_fetch

# The night folders as user rankings keeps them, with what root or an operator left beside them:
# a night folder of root's (the fetch run by hand), a symbolic link to /etc and a file, each with
# a night's name. 0.3's clean-up crashed on them after current had switched (exit 1, 4 tries, the
# job never ran); now they are left alone with a warning, older nights of rankings' go. Then root
# running the fetch, or the night, by hand there is turned away before it makes anything.
firestore_prune_and_root() {
    local etc before status=0 nights night_since
    etc=$(in_container_sh 'ls -A /etc | md5sum')
    in_container_sh "
        install -d -o root -g root $firestore_fetched/20000101T000000Z
        echo root >$firestore_fetched/20000101T000000Z/rating_events.ndjson
        ln -sfn /etc $firestore_fetched/20000102T000000Z
        echo file >$firestore_fetched/20000103T000000Z
        echo RANKINGS_FIRESTORE_KEEP=1 >>/etc/rankings.conf"
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    expect "result" "$(firestore_state Result)" success
    nights=$(in_container_sh "cd $firestore_fetched && ls -d 2*")
    echo "$nights"
    expect "nights" "$(grep -c . <<<"$nights")" 4
    expect "current is the one night of rankings'" "$(in_container_sh "cd $firestore_fetched && find . -maxdepth 1 -name '2*' -type d -user rankings | cut -c3-")" \
        "$(in_container readlink "$firestore_fetched/current")"
    expect "root's night" "$(in_container cat "$firestore_fetched/20000101T000000Z/rating_events.ndjson")" root
    expect "the link" "$(in_container readlink "$firestore_fetched/20000102T000000Z")" /etc
    expect "/etc" "$(in_container_sh 'ls -A /etc | md5sum')" "$etc"
    expect "the file" "$(in_container cat "$firestore_fetched/20000103T000000Z")" file
    expect "prune errors" "$(firestore_metric rankings-fetch.prom rankings_fetch_prune_errors)" 0
    firestore_journal | grep -F "left alone $firestore_fetched/20000101T000000Z: it belongs to root"
    before=$(in_container_sh "ls -A $firestore_fetched; ls -A /var/lib/rankings")
    in_container env RANKINGS_FIRESTORE_PROJECT="$firestore_project" FIRESTORE_EMULATOR_HOST="$emulator" \
        /usr/libexec/rankings-fetch-firestore "$firestore_fetched" 2>"$work/root-fetch.err" || status=$?
    cat -- "$work/root-fetch.err"
    expect "root's exit status (fetch)" "$status" 64
    grep -q "running as root, but $firestore_fetched belongs to rankings" "$work/root-fetch.err"
    status=0
    in_container rankings-night run --config /etc/rankings.conf 2>"$work/root-night.err" || status=$?
    cat -- "$work/root-night.err"
    expect "root's exit status (night)" "$status" 64
    grep -q "running as root, but /var/lib/rankings belongs to rankings" "$work/root-night.err"
    expect "after root's tries" "$(in_container_sh "ls -A $firestore_fetched; ls -A /var/lib/rankings")" "$before"
    in_container_sh "rm -rf $firestore_fetched/2000010[123]T000000Z; sed -i '/^RANKINGS_FIRESTORE_KEEP=/d' /etc/rankings.conf"
}
check "fetch: clean-up leaves root's night, a link to /etc and a file alone and succeeds; root refused (64) by the fetch and the night" \
    firestore_prune_and_root

firestore_partial() { in_container_sh "ls -A $firestore_fetched | grep '^\.partial-' || true"; }
firestore_partial_exists() { [[ -n $(firestore_partial) ]]; }
firestore_night_ended() { [[ $(firestore_state ActiveState) =~ ^(inactive|failed)$ ]]; }

# Stopped by systemd (systemctl stop, as at TimeoutStartSec=: SIGTERM to every process of the
# unit), the fetch removes its partial folder; killed (SIGKILL), it cannot, and the next night's
# fetch removes the dead one. Firestore never answers meanwhile (the emulator stopped, a 600 s
# call timeout), so the fetch is mid-way when it is stopped.
firestore_systemd_stop_and_kill() {
    local current
    current=$(in_container readlink "$firestore_fetched/current")
    in_container_sh 'echo RANKINGS_FIRESTORE_TIMEOUT_SECONDS=600 >>/etc/rankings.conf'
    freeze_emulator
    in_container systemctl start --no-block rankings.service
    wait_until 60 firestore_partial_exists
    in_container systemctl stop rankings.service
    expect "partial folder after SIGTERM" "$(firestore_partial)" ""
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 143
    expect "the night's exit status" "$(firestore_metric rankings-night.prom rankings_night_last_run_exit_status)" 143
    firestore_reset
    in_container systemctl start --no-block rankings.service
    wait_until 60 firestore_partial_exists
    in_container systemctl kill --signal=KILL rankings.service
    wait_until 60 firestore_night_ended
    expect "partial folders after SIGKILL" "$(firestore_partial | wc -l)" 1
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    thaw_emulator
    firestore_default_timeout
    firestore_reset
    in_container systemctl start rankings.service
    expect "partial folder after the next night" "$(firestore_partial)" ""
    [[ $(in_container readlink "$firestore_fetched/current") > $current ]]
}
check "systemd: the night stopped mid-fetch leaves no partial folder; killed, the next night's fetch removes it" \
    firestore_systemd_stop_and_kill

# A fetch that never ends is stopped at RANKINGS_FETCH_TIMEOUT_SECONDS on each try: 4 stopped
# tries, 69, no partial folder, and the lock free for the next night.
firestore_cron_bound() {
    local current status=0 since
    current=$(in_container readlink "$firestore_fetched/current")
    in_container_sh 'printf "%s\n" RANKINGS_FIRESTORE_TIMEOUT_SECONDS=600 RANKINGS_FETCH_TIMEOUT_SECONDS=3 >>/etc/rankings.conf'
    since=$(in_container date +%s)
    sleep 1
    freeze_emulator
    # A bound of the test's own: 0.3's wrapper waited as long as Firestore did.
    in_container timeout 300 runuser -u rankings -- /usr/libexec/rankings-cron /etc/rankings.conf </dev/null || status=$?
    thaw_emulator
    in_container sed -i '/^RANKINGS_FETCH_TIMEOUT_SECONDS=/d' /etc/rankings.conf
    firestore_default_timeout
    local log
    log=$(firestore_journal_since "$since")
    echo "$log"
    expect "exit status" "$status" 69
    # The shipped fetch runs in the night's process and ends itself at its limit.
    expect "stopped tries" "$(grep -c '^rankings-fetch-firestore: error: the fetch did not end within RANKINGS_FETCH_TIMEOUT_SECONDS (3 s)' <<<"$log")" 4
    expect "partial folder" "$(firestore_partial)" ""
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    in_container runuser -u rankings -- flock --nonblock /var/lib/rankings/.rankings.lock true
}
check "cron: a fetch that never ends is stopped at RANKINGS_FETCH_TIMEOUT_SECONDS on each try, 69, no partial folder, lock free" \
    firestore_cron_bound

firestore_teardown() {
    stop_emulator
    set_config RANKINGS_FETCH ''
    set_config RANKINGS_PUBLISH ''
    in_container_sh '
        sed -i "/^RANKINGS_FIRESTORE_\(ATTEMPTS\|TIMEOUT_SECONDS\|BACKOFF_SECONDS\)=/d; /^RANKINGS_RETRY_PAUSE_SECONDS=/d" /etc/rankings.conf
        systemctl reset-failed 2>/dev/null || true'
}
check "firestore: emulator stopped, fetch and publish unconfigured again" firestore_teardown
