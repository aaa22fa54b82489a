#!/usr/bin/env bash
# Gradescope autograder set-up (runs once, as root, when the autograder image is built).
# The autograder zip holds this file, run_autograder, course.conf (the lab and the timeout) and a
# `chaoslab/` folder: a clone of this project (optionally with your own rubric).
# Not run on Gradescope by us: written to Gradescope's documented contract (Ubuntu base image,
# /autograder/source holding the zip's contents); shellcheck-ed by test/examples/grading.test.ts.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Node.js 22 (NodeSource), Python 3 for the reference consumer and Python submissions; add the
# toolchains your students' languages need (cargo, ...).
apt-get install -y -qq ca-certificates curl python3 make g++ git
curl -fsSL https://deb.nodesource.com/setup_22.x | bash -
apt-get install -y -qq nodejs

# Go, to build the pinned Toxiproxy (it needs Go 1.23 or later; Ubuntu's golang-go is older): the
# official tarball, pinned and checked against go.dev/dl's SHA-256. Gradescope's machines are
# x86-64; elsewhere take the tarball of your architecture and its checksum from go.dev/dl.
GO_VERSION=1.23.4
GO_SHA256=6924efde5de86fe277676e929dc9917d466efa02fb934197bc2eba35d5680971 # go1.23.4.linux-amd64.tar.gz
if [ "$(uname -m)" != x86_64 ]; then
  echo "setup.sh: this machine is $(uname -m); pin the go${GO_VERSION} tarball of that architecture (go.dev/dl)" >&2
  exit 1
fi
curl -fsSLo /tmp/go.tar.gz "https://go.dev/dl/go${GO_VERSION}.linux-amd64.tar.gz"
echo "${GO_SHA256}  /tmp/go.tar.gz" | sha256sum -c -
rm -rf /usr/local/go
tar -C /usr/local -xzf /tmp/go.tar.gz
rm -f /tmp/go.tar.gz
export PATH=/usr/local/go/bin:$PATH
go version

cd /autograder/source/chaoslab
# npm ci, the build, Toxiproxy, and the sandbox tools (which Gradescope's container cannot use:
# it runs as root without CAP_SYS_ADMIN, so grading there is unsealed; see run_autograder).
make setup
