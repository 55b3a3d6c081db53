#!/usr/bin/env bash
# A single-node Slurm on this machine (munged, slurmctld, slurmd in a private directory, on
# private ports, as root, no systemd), then examples/fleet/slurm/oscost.sbatch submitted for
# real and its fleet report checked. Every daemon started here is stopped on exit.
# Exit 0 = tested; exit 3 = Slurm could not be brought up here (the caller says so and keeps
# the syntax and import-only checks); any other failure is a real failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/target/release/oscost"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 || { echo "slurm: apt-get install slurm-wlm munge failed"; exit 3; }
fi

d="$(mktemp -d)"
stop() {
    for p in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/pid"; do
        [[ -s "$p" ]] && kill "$(cat "$p")" 2>/dev/null || true
    done
    sleep 1
    rm -rf "$d"
}
trap stop EXIT
node="$(hostname -s)"
mkdir -p "$d/state" "$d/spool" "$d/munge"
chmod 700 "$d/munge"
head -c 1024 /dev/urandom >"$d/munge/munge.key"
chmod 400 "$d/munge/munge.key"
munged --force -S "$d/munge/sock" --key-file="$d/munge/munge.key" --log-file="$d/munge/log" \
    --pid-file="$d/munge/pid" --seed-file="$d/munge/seed" || { echo "slurm: munged did not start"; exit 3; }
cat >"$d/slurm.conf" <<CONF
ClusterName=oscost-ci
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF="$d/slurm.conf"
slurmctld -i || { echo "slurm: slurmctld did not start"; exit 3; }
slurmd || { echo "slurm: slurmd did not start"; tail -5 "$d/slurmd.log"; exit 3; }
for _ in $(seq 30); do
    sinfo -h -o '%T' 2>/dev/null | grep -q idle && break
    sleep 1
done
if ! sinfo -h -o '%T' | grep -q idle; then
    echo "slurm: the node did not become idle within 30 s:"
    tail -5 "$d/slurmctld.log" "$d/slurmd.log"
    exit 3
fi
(cd "$d" && OSCOST="$bin" RESULTS="$d/results" OSCOST_CMD="syscall --quick --which null" \
    OSCOST_LABELS="campaign=slurm-ci" timeout 180 sbatch -N 1 --wait \
    "$OLDPWD/examples/fleet/slurm/oscost.sbatch" >/dev/null) \
    || { echo "slurm: the batch job failed:"; cat "$d"/oscost-*.out; exit 1; }
python3 - "$d/results/fleet.json" "$node" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
hosts = [h["name"] for h in f["hosts"]]
assert hosts == [sys.argv[2]], hosts
labels = f["hosts"][0]["labels"]
assert labels["campaign"] == "slurm-ci" and labels["slurm_job"].isdigit(), labels
print("slurm: job", labels["slurm_job"], "measured", hosts[0], "and its fleet report lists it")
PY
