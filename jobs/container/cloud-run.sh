#!/bin/sh
# The rankings night as a Cloud Run job, started by Cloud Scheduler at midnight New York time.
# Copy this file, set the five values below, and run it (or paste the commands one by one);
# docs/containers.md walks through each step. Every step but the last may be run again (`deploy`
# creates or updates, `|| true` passes over what exists); a new IMAGE needs steps 2 and 3 only. The
# schedule, once made, is changed with `gcloud scheduler jobs update http` and the same flags.
set -eu

PROJECT=my-jokes-app                    # the Firebase / Google Cloud project holding rating_events
REGION=us-east1                         # where the job, the image and the schedule live
VERSION=0.5.0                           # jobs/image.sh's tag: rankings --version
IMAGE=$REGION-docker.pkg.dev/$PROJECT/rankings/rankings:$VERSION
SA=rankings-night@$PROJECT.iam.gserviceaccount.com           # the night's identity
SCHEDULER_SA=rankings-scheduler@$PROJECT.iam.gserviceaccount.com   # the schedule's identity

gcloud services enable run.googleapis.com cloudscheduler.googleapis.com artifactregistry.googleapis.com \
    firestore.googleapis.com --project "$PROJECT"

# 1. The night's service account: read rating_events and write the boards, nothing else.
#    roles/datastore.user is Firestore read and write; it covers the fetch, the proof's COUNTs and
#    the publish.
gcloud iam service-accounts create rankings-night --project "$PROJECT" \
    --display-name "rankings night (Cloud Run job)" || true
gcloud projects add-iam-policy-binding "$PROJECT" --member "serviceAccount:$SA" \
    --role roles/datastore.user --condition None

# 2. The image, in Artifact Registry (built here with jobs/image.sh; push with podman or docker).
gcloud artifacts repositories create rankings --project "$PROJECT" --location "$REGION" \
    --repository-format docker || true
gcloud auth print-access-token | podman login --username oauth2accesstoken --password-stdin "$REGION-docker.pkg.dev"
podman push "rankings:$VERSION" "$IMAGE"

# 3. The job: one task, the platform's retries (the night's own are off on Cloud Run), a task
#    timeout above the longest try of the night's own limits, so that they speak first (the
#    fetch's 55 minutes, 15 for the job and 5 for the publish of each board, the proof's 5 and a
#    second for every 32 COUNTs it asks: 101 minutes with the all-time board of 20,000 jokes, 142
#    with the 30-day board beside it), settings as variables.
#    `deploy` creates the job or updates it; `gcloud run jobs create` takes the same flags.
#    No volume: every night is a full, proven read (docs/containers.md says what that costs, and
#    how an NFS volume at /var/lib/rankings makes nights incremental).
gcloud run jobs deploy rankings-night --project "$PROJECT" --region "$REGION" \
    --image "$IMAGE" \
    --tasks 1 \
    --parallelism 1 \
    --max-retries 1 \
    --task-timeout 150m \
    --cpu 1 \
    --memory 1Gi \
    --service-account "$SA" \
    --set-env-vars "RANKINGS_FIRESTORE_PROJECT=$PROJECT"

# 4. The schedule: Cloud Scheduler calls the Run API's jobs.run as its own account, which may run
#    this job and nothing else (roles/run.invoker on the job carries run.jobs.run).
gcloud iam service-accounts create rankings-scheduler --project "$PROJECT" \
    --display-name "starts the rankings night" || true
gcloud run jobs add-iam-policy-binding rankings-night --project "$PROJECT" --region "$REGION" \
    --member "serviceAccount:$SCHEDULER_SA" --role roles/run.invoker
gcloud scheduler jobs create http rankings-nightly --project "$PROJECT" --location "$REGION" \
    --schedule "0 0 * * *" \
    --time-zone America/New_York \
    --http-method POST \
    --uri "https://run.googleapis.com/v2/projects/$PROJECT/locations/$REGION/jobs/rankings-night:run" \
    --oauth-service-account-email "$SCHEDULER_SA" \
    --oauth-token-scope https://www.googleapis.com/auth/cloud-platform

# A night now, by hand, waiting for its end (its status is the execution's):
#   gcloud run jobs execute rankings-night --project "$PROJECT" --region "$REGION" --wait
# Accepting a drop once (rankings-night run -- --max-drop 100):
#   gcloud run jobs execute rankings-night --project "$PROJECT" --region "$REGION" --wait \
#       --args=rankings-night,run,--,--max-drop,100
