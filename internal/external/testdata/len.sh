#!/bin/sh
# The score of the object in file $1: its length in bytes.
wc -c <"$1"
