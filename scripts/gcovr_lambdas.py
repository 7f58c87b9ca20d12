#!/usr/bin/python3
"""scripts/gcovr_lambdas.py — Debian's gcovr 5.2 (its command line, unchanged) with one limitation lifted: a function
that two objects place at different lines is merged instead of stopping the run.

GCC numbers the lambdas of a SpecTraits<...> field table per translation unit ({lambda(RopeSpec const&)#10} is line
314 in one unity unit and 267 in another: the --full run at 0ecc34a found this for DeBERTa, FIRE and RoPE, after
T5's), and gcovr 5.2 asserts that a function of one name has one line (merging.py merge_function); it has no option
to merge them. Here the first object's line is kept and the counts are merged as usual: which lines and branches ran
is unaffected (those are counted per line of the file, not per function).

Usage: gcovr_lambdas.py GCOVR-ARGUMENTS...   (exit status: gcovr's)"""
import sys

import gcovr.merging as merging
from gcovr.__main__ import main

_merge_function = merging.merge_function


def _merge_function_at_first_line(left, right, options):
    right.lineno = left.lineno
    return _merge_function(left, right, options)


merging.merge_function = _merge_function_at_first_line

if __name__ == "__main__":
    sys.argv[0] = "gcovr"
    sys.exit(main())
