#!/usr/bin/env bash
# Gradescope autograder set-up (runs once, as root, when the autograder image is built).
# The autograder zip holds this file, run_autograder, and a `chaoslab/` folder: a clone of
# this project (optionally with your own rubric, e.g. chaoslab/rubrics/course.yaml).
# Not run on Gradescope by us: written to Gradescope's documented contract (Ubuntu base image,
# /autograder/source holding the zip's contents).
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Node.js 22 (NodeSource), Python 3 for the reference consumer and Python submissions, Go to build
# the pinned Toxiproxy; add the toolchains your students' languages need (golang, cargo, ...).
apt-get install -y -qq ca-certificates curl python3 golang-go make g++ git
curl -fsSL https://deb.nodesource.com/setup_22.x | bash -
apt-get install -y -qq nodejs
cd /autograder/source/chaoslab
# npm ci, the build, Toxiproxy, and the sandbox tools (which Gradescope's container cannot use:
# it runs as root without CAP_SYS_ADMIN, so grading there is unsealed; see run_autograder).
make setup
