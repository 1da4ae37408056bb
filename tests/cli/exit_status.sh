#!/bin/sh
# Runs a command and prints its exit status last, so that a test that matches the output
# with PASS_REGULAR_EXPRESSION (which ignores the exit code) checks it too: those regular
# expressions end with "exit status 0".
"$@"
echo "exit status $?"
