# Sourced by Tests/container/run.sh: the whole nightly chain with the shipped Firestore hooks,
# against Google's emulator (a host process in the container's network namespace, see run.sh):
# rankings-fetch.service (its tries inside one start), then the job, then rankings-publish.service, under systemd and under
# the cron wrapper; and with the emulator stopped (SIGSTOP: it keeps its data but answers
# nothing), the chain fails at the fetch after its retries, and neither the fetched folder nor
# the document nor Firestore's copy changes.
#
# The job reads what the fetch left (/var/lib/rankings/firestore/current, Firestore's typed
# Document lines); the emulator is seeded with the sample's events, so the document is the
# sample's.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.
# RANKINGS_CONTAINER_EVIDENCE=DIR keeps the journals of both runs.

firestore_project=demo-rankings-container
firestore_fetched=/var/lib/rankings/firestore

firestore_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    in_container_sh '
        install -d -m 0755 /srv/rankings/exports
        # mkdir, not install -d: a chmod of the existing directory would narrow its ACL mask.
        mkdir -p /var/lib/prometheus/node-exporter
        systemd-tmpfiles --create rankings.conf
        cp /mnt/share/rating_events.ndjson /srv/rankings/exports/
        chmod 0644 /srv/rankings/exports/rating_events.ndjson
        rm -rf /var/lib/rankings/all_time.json '"$firestore_fetched"' /var/lib/prometheus/node-exporter/*.prom
        for unit in rankings-publish rankings; do
            mkdir -p /run/systemd/system/$unit.service.d
            printf "[Service]\nRestartSec=1s\n" >/run/systemd/system/$unit.service.d/fast.conf
        done
        systemctl daemon-reload
        # Few tries inside each hook and 1 s between the fetch tries, so four tries of a fetch
        # against a stopped emulator take seconds (the shipped defaults: 5 tries, 300 s).
        printf "%s\n" RANKINGS_FIRESTORE_ATTEMPTS=2 RANKINGS_FIRESTORE_BACKOFF_SECONDS=0.2 \
            RANKINGS_RETRY_PAUSE_SECONDS=1 >>/etc/rankings.conf'
    set_config RANKINGS_EXPORTS "$firestore_fetched/current"
    set_config RANKINGS_OUTPUT /var/lib/rankings/all_time.json
    set_config RANKINGS_FLAGS '"--computed-at 2026-02-18T05:00:00Z"'
    set_config RANKINGS_METRICS /var/lib/prometheus/node-exporter/rankings.prom
    set_config RANKINGS_LOG_FILE /var/lib/rankings/cron.log
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
firestore_unit() { in_container systemctl show -P "$2" "$1"; }
firestore_publish_done() { [[ $(firestore_unit rankings-publish.service ActiveState) =~ ^(inactive|failed)$ ]]; }
firestore_metric() { in_container awk -v k="$2" '$1 == k { print $2 }' "/var/lib/prometheus/node-exporter/$1"; }
# A stopped emulator accepts connections and never answers: each call waits for its timeout,
# 2 s while the emulator is stopped (the shipped 60 s otherwise; a first page can take seconds).
firestore_short_timeout() { in_container_sh 'echo RANKINGS_FIRESTORE_TIMEOUT_SECONDS=2 >>/etc/rankings.conf'; }
firestore_default_timeout() { in_container sed -i '/^RANKINGS_FIRESTORE_TIMEOUT_SECONDS=/d' /etc/rankings.conf; }
firestore_evidence() {
    if [[ -n ${RANKINGS_CONTAINER_EVIDENCE:-} ]]; then
        mkdir -p -- "$RANKINGS_CONTAINER_EVIDENCE"
        cat >"$RANKINGS_CONTAINER_EVIDENCE/$1"
    else
        cat >/dev/null
    fi
}

firestore_systemd_chain() {
    local since
    since=$(in_container date +%s)
    in_container systemctl start rankings.service
    expect "fetch result" "$(firestore_unit rankings-fetch.service Result)" success
    expect "events fetched" "$(in_container_sh "wc -l <$firestore_fetched/current/rating_events.ndjson")" 5000
    expect "fetched folder owner" "$(in_container stat -c %U "$firestore_fetched/current/")" rankings
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    wait_until 60 firestore_publish_done
    expect "publish result" "$(firestore_unit rankings-publish.service Result)" success
    # In that order: the fetch ended before the job started, the job before the publish.
    local fetch_end job_start job_end publish_start
    fetch_end=$(firestore_unit rankings-fetch.service ExecMainExitTimestampMonotonic)
    job_start=$(firestore_unit rankings.service ExecMainStartTimestampMonotonic)
    job_end=$(firestore_unit rankings.service ExecMainExitTimestampMonotonic)
    publish_start=$(firestore_unit rankings-publish.service ExecMainStartTimestampMonotonic)
    ((fetch_end <= job_start && job_end <= publish_start))
    emulator_client "$firestore_project" matches weekly_rankings all_time "$repo/sample-data/expected/all_time.json"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 0
    in_container journalctl --no-pager --since "@$since" -o short-iso \
        -u rankings-fetch.service -u rankings.service -u rankings-publish.service | firestore_evidence systemd-chain.journal
    firestore_show | firestore_evidence systemd-chain.document
}
check "systemd: rankings.service runs fetch, job, publish in order; the emulator holds weekly_rankings/all_time" \
    firestore_systemd_chain

firestore_incremental_night() {
    # A second night after one new vote: only that vote is read, merged into the first night's
    # snapshot, and the document published is the one a full read of the collection gives.
    emulator_client "$firestore_project" vote rating_events zz-container-vote
    in_container systemctl start rankings.service
    wait_until 60 firestore_publish_done
    expect "publish result" "$(firestore_unit rankings-publish.service Result)" success
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
    local since current document updated job_start publish_start last_success
    since=$(in_container date +%s)
    current=$(in_container readlink "$firestore_fetched/current")
    document=$(in_container sha256sum /var/lib/rankings/all_time.json)
    updated=$(firestore_update_time)
    job_start=$(firestore_unit rankings.service ExecMainStartTimestampMonotonic)
    publish_start=$(firestore_unit rankings-publish.service ExecMainStartTimestampMonotonic)
    last_success=$(firestore_metric rankings.prom rankings_last_success_timestamp_seconds)
    freeze_emulator
    firestore_short_timeout
    local status=0
    # Returns once the fetch's last try failed: the job's start fails with its dependency.
    in_container systemctl start rankings.service || status=$?
    firestore_default_timeout
    thaw_emulator
    ((status != 0))
    expect "fetch state" "$(firestore_unit rankings-fetch.service ActiveState)" failed
    in_container systemctl --failed --plain --no-legend | grep -q '^rankings-fetch.service '
    expect "job started again?" "$(firestore_unit rankings.service ExecMainStartTimestampMonotonic)" "$job_start"
    expect "publish started again?" "$(firestore_unit rankings-publish.service ExecMainStartTimestampMonotonic)" "$publish_start"
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "document" "$(in_container sha256sum /var/lib/rankings/all_time.json)" "$document"
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 69
    expect "the job's last success" "$(firestore_metric rankings.prom rankings_last_success_timestamp_seconds)" "$last_success"
    local log
    log=$(in_container journalctl --no-pager --since "@$since" -o cat -u rankings-fetch.service)
    expect "fetch tries" "$(grep -c '^rankings-fetch-firestore: error: ' <<<"$log")" 4
    expect "tries again" "$(grep -c '; trying again in 1s$' <<<"$log")" 3
    expect "gives up" "$(grep -c '^fetch failed with status 69 on try 4; no tries left, the job does not run$' <<<"$log")" 1
    in_container journalctl --no-pager --since "@$since" -o short-iso \
        -u rankings-fetch.service -u rankings.service -u rankings-publish.service | firestore_evidence systemd-failed-fetch.journal
    in_container systemctl reset-failed rankings-fetch.service
}
check "systemd: emulator stopped, the fetch fails 4 times, shows in systemctl --failed; job, publish, current, document and Firestore untouched" \
    firestore_systemd_failed_fetch

firestore_cron() { in_container runuser -u rankings -- /usr/libexec/rankings-cron /etc/rankings.conf; }

firestore_cron_chain() {
    # Gone first, so that the publish shows: Firestore keeps a document's update time when a
    # write leaves its content as it was, and systemd's run published the same document.
    emulator_client "$firestore_project" delete weekly_rankings all_time
    expect "deleted" "$(firestore_show | tr -d ' \n')" '{"exists":false}'
    in_container rm -f /var/lib/rankings/all_time.json /var/lib/rankings/cron.log
    firestore_cron
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    # The wrapper's steps, in order.
    expect "steps" "$(in_container sed -n 's/^[^ ]* rankings-cron\[[0-9]*\]: \(fetching\|fetched\|starting\|done\|publishing\|published\).*/\1/p' \
        /var/lib/rankings/cron.log | tr '\n' ' ')" "fetching fetched starting done publishing published "
    emulator_client "$firestore_project" matches weekly_rankings all_time "$repo/sample-data/expected/all_time.json"
    in_container cat /var/lib/rankings/cron.log | firestore_evidence cron-chain.log
}
check "cron: rankings-cron runs fetch, job, publish in order, and the emulator holds weekly_rankings/all_time" \
    firestore_cron_chain

firestore_cron_failed_fetch() {
    local current document updated status=0
    current=$(in_container readlink "$firestore_fetched/current")
    document=$(in_container sha256sum /var/lib/rankings/all_time.json)
    updated=$(firestore_update_time)
    in_container rm -f /var/lib/rankings/cron.log
    freeze_emulator
    firestore_short_timeout
    firestore_cron || status=$?
    firestore_default_timeout
    thaw_emulator
    expect "exit status" "$status" 69
    expect "fetch tries" "$(in_container grep -c 'fetch hook failed' /var/lib/rankings/cron.log)" 4
    expect "job runs" "$(in_container grep -c 'starting (New York time' /var/lib/rankings/cron.log || true)" 0
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "document" "$(in_container sha256sum /var/lib/rankings/all_time.json)" "$document"
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    in_container cat /var/lib/rankings/cron.log | firestore_evidence cron-failed-fetch.log
}
check "cron: emulator stopped, the wrapper tries the fetch 4 times, exits 69; job, current, document and Firestore untouched" \
    firestore_cron_failed_fetch

# The night folders as user rankings keeps them, with what root or an operator left beside them:
# a night folder of root's (the hook run by hand), a symbolic link to /etc and a file, each with
# a night's name. 0.3's clean-up crashed on them after current had switched (exit 1, 4 tries, the
# job never ran); now they are left alone with a warning, older nights of rankings' go. Then root
# running the hook by hand there is turned away before it makes anything.
firestore_prune_and_root() {
    local etc before status=0 nights
    etc=$(in_container_sh 'ls -A /etc | md5sum')
    in_container_sh "
        install -d -o root -g root $firestore_fetched/20000101T000000Z
        echo root >$firestore_fetched/20000101T000000Z/rating_events.ndjson
        ln -sfn /etc $firestore_fetched/20000102T000000Z
        echo file >$firestore_fetched/20000103T000000Z
        echo RANKINGS_FIRESTORE_KEEP=1 >>/etc/rankings.conf"
    in_container systemctl start rankings-fetch.service
    expect "fetch result" "$(firestore_unit rankings-fetch.service Result)" success
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
    in_container journalctl --no-pager -o cat -u rankings-fetch.service | grep -F "left alone $firestore_fetched/20000101T000000Z: it belongs to root"
    before=$(in_container_sh "ls -A $firestore_fetched")
    in_container env RANKINGS_FIRESTORE_PROJECT="$firestore_project" FIRESTORE_EMULATOR_HOST="$emulator" \
        /usr/libexec/rankings-fetch-firestore "$firestore_fetched" 2>"$work/root-fetch.err" || status=$?
    cat -- "$work/root-fetch.err"
    expect "root's exit status" "$status" 64
    grep -q "running as root, but $firestore_fetched belongs to rankings" "$work/root-fetch.err"
    expect "after root's try" "$(in_container_sh "ls -A $firestore_fetched")" "$before"
    in_container_sh "rm -rf $firestore_fetched/2000010[123]T000000Z; sed -i '/^RANKINGS_FIRESTORE_KEEP=/d' /etc/rankings.conf"
}
check "fetch: clean-up leaves root's night, a link to /etc and a file alone and succeeds; root refused (64) in rankings' DIR" \
    firestore_prune_and_root

firestore_partial() { in_container_sh "ls -A $firestore_fetched | grep '^\.partial-' || true"; }
firestore_partial_exists() { [[ -n $(firestore_partial) ]]; }
firestore_fetch_ended() { [[ $(firestore_unit rankings-fetch.service ActiveState) =~ ^(inactive|failed)$ ]]; }

# Stopped by systemd (systemctl stop, as at TimeoutStartSec=: SIGTERM to every process of the
# unit), the hook removes its partial folder; killed (SIGKILL), it cannot, and the next fetch
# removes the dead one. Firestore never answers meanwhile (the emulator stopped, a 600 s call
# timeout), so the fetch is mid-way when it is stopped.
firestore_systemd_stop_and_kill() {
    local current
    current=$(in_container readlink "$firestore_fetched/current")
    in_container_sh 'echo RANKINGS_FIRESTORE_TIMEOUT_SECONDS=600 >>/etc/rankings.conf'
    freeze_emulator
    in_container systemctl start --no-block rankings-fetch.service
    wait_until 60 firestore_partial_exists
    in_container systemctl stop rankings-fetch.service
    expect "partial folder after SIGTERM" "$(firestore_partial)" ""
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "fetch metric" "$(firestore_metric rankings-fetch.prom rankings_fetch_last_run_exit_status)" 143
    in_container systemctl start --no-block rankings-fetch.service
    wait_until 60 firestore_partial_exists
    in_container systemctl kill --signal=KILL rankings-fetch.service
    wait_until 60 firestore_fetch_ended
    expect "partial folders after SIGKILL" "$(firestore_partial | wc -l)" 1
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    thaw_emulator
    firestore_default_timeout
    in_container systemctl reset-failed rankings-fetch.service 2>/dev/null || true
    in_container systemctl start rankings-fetch.service
    expect "partial folder after the next fetch" "$(firestore_partial)" ""
    [[ $(in_container readlink "$firestore_fetched/current") > $current ]]
}
check "systemd: the fetch stopped mid-way leaves no partial folder; killed, the next fetch removes it" \
    firestore_systemd_stop_and_kill

# Under cron, a fetch that never ends is stopped at RANKINGS_FETCH_TIMEOUT_SECONDS as the unit
# stops it: 4 stopped tries, 69, no partial folder, and the lock free for the next night.
firestore_cron_bound() {
    local current status=0
    current=$(in_container readlink "$firestore_fetched/current")
    in_container rm -f /var/lib/rankings/cron.log
    in_container_sh 'printf "%s\n" RANKINGS_FIRESTORE_TIMEOUT_SECONDS=600 RANKINGS_FETCH_TIMEOUT_SECONDS=3 >>/etc/rankings.conf'
    freeze_emulator
    # A bound of the test's own: 0.3's wrapper waited as long as Firestore did.
    in_container timeout 300 runuser -u rankings -- /usr/libexec/rankings-cron /etc/rankings.conf || status=$?
    thaw_emulator
    in_container sed -i '/^RANKINGS_FETCH_TIMEOUT_SECONDS=/d' /etc/rankings.conf
    firestore_default_timeout
    in_container cat /var/lib/rankings/cron.log
    expect "exit status" "$status" 69
    expect "stopped tries" "$(in_container grep -c 'fetch hook failed with status 124 (stopped at its limit of 3s)' /var/lib/rankings/cron.log)" 4
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
    in_container_sh 'rm -rf /run/systemd/system/rankings-fetch.service.d /run/systemd/system/rankings-publish.service.d \
            /run/systemd/system/rankings.service.d
        sed -i "/^RANKINGS_FIRESTORE_\(ATTEMPTS\|TIMEOUT_SECONDS\|BACKOFF_SECONDS\)=/d; /^RANKINGS_RETRY_PAUSE_SECONDS=/d" /etc/rankings.conf
        systemctl daemon-reload
        systemctl reset-failed 2>/dev/null || true'
}
check "firestore: emulator stopped, hooks unconfigured again" firestore_teardown
