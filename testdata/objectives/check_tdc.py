#!/usr/bin/python3
"""Scores molecules with TDC's oracles, the code behind the PMO benchmark's published numbers.

PMO (Gao et al., NeurIPS 2022; github.com/wenhao-gao/mol_opt) scores its 23 tasks with TDC's
`Oracle(name=...)` and recommends PyTDC 0.3.6, whose oracles live in tdc/chem_utils/oracle/oracle.py
of mims-harvard/TDC at f8349f62 (2022-02-19, "0.3.6"). Several of them differ from GuacaMol's
definitions, which issue 24 asks ours to follow (testdata/objectives/check_guacamol.py checks that):
TDC fixed sitagliptin_mpo on 2022-04-18 (d566b108) and zaleplon_mpo on 2022-08-26 (4cad47ac), both
after 0.3.6. This script runs that file itself with Debian's python3-rdkit, numpy, scipy and
networkx, so that a table of ours can say which published numbers it can be set beside.

Get the source: `git clone https://github.com/mims-harvard/TDC` and
`git -C TDC show f8349f62:tdc/chem_utils/oracle/oracle.py > oracle.py` (or give the checkout and
--commit). The file imports `rdkit.six` (gone from RDKit 2022.09) and two helpers of TDC's package
that no score here calls; the loader gives them stand-ins and changes nothing else.

usage: check_tdc.py TDC_CHECKOUT SMILES_TXT OUT.tsv [--commit REV] [--objectives a,b,...]
  Writes one line per molecule: the SMILES, then one column per objective (header line first),
  each score printed with repr. A molecule TDC's function fails on gets "nan". Each objective is
  scored by a module of its own.

Then compare with ours:
  testdata/objectives/compare_tdc.sh TDC_CHECKOUT SMILES_TXT [TLBO_BIN]
"""
import argparse
import math
import subprocess
import sys
import types

# Issue 24's objectives: TDC's function of each name (the names of its Oracle class).
OBJECTIVES = [
    'qed', 'celecoxib_rediscovery', 'troglitazone_rediscovery', 'thiothixene_rediscovery',
    'albuterol_similarity', 'mestranol_similarity', 'isomers_c7h8n2o2', 'isomers_c9h10n2o2pf2cl',
    'median1', 'median2', 'osimertinib_mpo', 'fexofenadine_mpo', 'ranolazine_mpo', 'perindopril_mpo',
    'amlodipine_mpo', 'sitagliptin_mpo', 'zaleplon_mpo', 'valsartan_smarts', 'deco_hop', 'scaffold_hop',
]

# PyTDC 0.3.6, the version PMO's README recommends.
DEFAULT_COMMIT = 'f8349f62'


def oracle_source(checkout, commit):
    """Returns TDC's oracle file at commit, compiled, with stand-ins for what RDKit 2022.09 and
    the absent package lack."""
    src = subprocess.run(['git', '-C', checkout, 'show', f'{commit}:tdc/chem_utils/oracle/oracle.py'],
                         check=True, capture_output=True, text=True).stdout
    stand_ins = {
        'from rdkit.six import iteritems': 'iteritems = lambda d: iter(d.items())',
        'from ...utils import oracle_load': 'oracle_load = None',
        'from ...utils import print_sys, install': 'print_sys = install = None',
    }
    for line, repl in stand_ins.items():
        if line in src:
            src = src.replace(line, repl)
    return compile(src, f'{checkout}@{commit}:tdc/chem_utils/oracle/oracle.py', 'exec')


def new_module(code):
    """Returns a fresh module run from the compiled oracle file."""
    mod = types.ModuleType('tdc_oracle')
    exec(code, mod.__dict__)
    return mod


def main():
    p = argparse.ArgumentParser()
    p.add_argument('checkout')
    p.add_argument('smiles')
    p.add_argument('out')
    p.add_argument('--commit', default=DEFAULT_COMMIT)
    p.add_argument('--objectives', default=','.join(OBJECTIVES))
    a = p.parse_args()
    names = a.objectives.split(',')
    unknown = [n for n in names if n not in OBJECTIVES]
    if unknown:
        sys.exit(f'check_tdc.py: unknown objectives {unknown}; known: {OBJECTIVES}')
    # A fresh module for each objective, as a PMO run scores with one oracle: at 0.3.6 some of
    # TDC's functions keep state in module globals that others of them overwrite (deco_hop scored
    # after the others in one module gives other values).
    code = oracle_source(a.checkout, a.commit)
    funcs = {n: getattr(new_module(code), n) for n in names}
    with open(a.smiles) as f:
        smiles = [s.strip() for s in f if s.strip()]
    with open(a.out, 'w') as out:
        out.write('smiles\t' + '\t'.join(names) + '\n')
        for s in smiles:
            row = []
            for n in names:
                try:
                    v = float(funcs[n](s))
                except Exception:  # TDC's own failure on the molecule
                    v = math.nan
                row.append(repr(v))
            out.write(s + '\t' + '\t'.join(row) + '\n')


if __name__ == '__main__':
    main()
