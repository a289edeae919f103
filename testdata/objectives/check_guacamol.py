#!/usr/bin/python3
"""Scores molecules with GuacaMol's own code, to check internal/task/molecule/objectives against it.

make_fixtures.py writes GuacaMol's definitions again (GuacaMol is not installable here); this script
runs GuacaMol's source itself: the objectives of its goal-directed suite v2 (benchmark_suites.py, with
their targets as GuacaMol writes them) and standard_benchmarks.isomers_c7h8n2o2,
with Debian's python3-rdkit, numpy and scipy. Get the source with
`git clone https://github.com/BenevolentAI/guacamol` (checked at 60ebe1f). Its package imports fcd and
tqdm, which the goal-directed scores never call; this script puts empty stand-ins for them on the path.

usage: check_guacamol.py GUACAMOL_CHECKOUT SMILES_TXT OUT.tsv [--objectives a,b,...]
  Writes one line per molecule: the SMILES, then one column per objective (header line first),
  the score printed with repr (17 significant digits). A SMILES that GuacaMol cannot parse gets
  its corrupt score, -1. QED is rdkit.Chem.QED.qed, as GuacaMol's qed().

Then compare with ours:
  testdata/objectives/compare_guacamol.sh GUACAMOL_CHECKOUT SMILES_TXT [TLBO_BIN]
"""
import argparse
import os
import sys
import tempfile

# PMO's names for GuacaMol's benchmarks (TDC's oracles are these), by the names GuacaMol gives them:
# all but one are in its goal_directed_suite_v2, built by GuacaMol's own code with its own targets.
SUITE_NAMES = {
    'celecoxib_rediscovery': 'Celecoxib rediscovery',
    'troglitazone_rediscovery': 'Troglitazone rediscovery',
    'thiothixene_rediscovery': 'Thiothixene rediscovery',
    'albuterol_similarity': 'Albuterol similarity',
    'mestranol_similarity': 'Mestranol similarity',
    'isomers_c9h10n2o2pf2cl': 'C9H10N2O2PF2Cl',
    'median1': 'Median molecules 1',
    'median2': 'Median molecules 2',
    'osimertinib_mpo': 'Osimertinib MPO',
    'fexofenadine_mpo': 'Fexofenadine MPO',
    'ranolazine_mpo': 'Ranolazine MPO',
    'perindopril_mpo': 'Perindopril MPO',
    'amlodipine_mpo': 'Amlodipine MPO',
    'sitagliptin_mpo': 'Sitagliptin MPO',
    'zaleplon_mpo': 'Zaleplon MPO',
    'valsartan_smarts': 'Valsartan SMARTS',
    'deco_hop': 'Deco Hop',
    'scaffold_hop': 'Scaffold Hop',
}
# isomers_c7h8n2o2 is in PMO but not in the v2 suite: standard_benchmarks.isomers_c7h8n2o2().
OBJECTIVES = ['qed'] + list(SUITE_NAMES)[:5] + ['isomers_c7h8n2o2'] + list(SUITE_NAMES)[5:]


def guacamol_objectives(names):
    """The score functions of the objectives called names, from GuacaMol's code."""
    from rdkit import Chem
    from rdkit.Chem import QED
    import guacamol.benchmark_suites as suites
    import guacamol.standard_benchmarks as sb
    suite = {b.name: b for b in suites.goal_directed_suite_v2()}

    def qed(s):
        m = Chem.MolFromSmiles(s)
        return -1.0 if m is None else QED.qed(m)

    out = []
    for n in names:
        if n == 'qed':
            out.append(qed)
        elif n == 'isomers_c7h8n2o2':
            out.append(sb.isomers_c7h8n2o2().objective.score)
        elif n in SUITE_NAMES:
            out.append(suite[SUITE_NAMES[n]].objective.score)
        else:
            sys.exit(f'check_guacamol.py: unknown objective {n!r}')
    return out


def stand_ins(d):
    """Writes empty fcd and tqdm packages into d, enough for GuacaMol's imports."""
    os.makedirs(os.path.join(d, 'fcd'))
    with open(os.path.join(d, 'fcd', '__init__.py'), 'w') as f:
        f.write('def load_ref_model(*a, **k):\n    raise NotImplementedError\n'
                'def get_predictions(*a, **k):\n    raise NotImplementedError\n'
                'def calculate_frechet_distance(*a, **k):\n    raise NotImplementedError\n')
    os.makedirs(os.path.join(d, 'tqdm'))
    with open(os.path.join(d, 'tqdm', '__init__.py'), 'w') as f:
        f.write('class tqdm:\n'
                '    def __init__(self, iterable=None, *a, **k):\n        self.iterable = iterable\n'
                '    def __iter__(self):\n        return iter(self.iterable)\n'
                '    def update(self, *a, **k):\n        pass\n'
                '    def close(self):\n        pass\n')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('checkout')
    p.add_argument('smiles')
    p.add_argument('out')
    p.add_argument('--objectives', default=','.join(OBJECTIVES))
    a = p.parse_args()
    names = a.objectives.split(',')
    with tempfile.TemporaryDirectory(prefix='guacamol-stand-ins-') as d:
        stand_ins(d)
        sys.path[:0] = [os.path.abspath(a.checkout), d]
        from rdkit import RDLogger
        RDLogger.DisableLog('rdApp.*')
        scorers = guacamol_objectives(names)
    with open(a.smiles) as f:
        smiles = [line.strip() for line in f if line.strip()]
    tmp = a.out + '.tmp'
    with open(tmp, 'w') as out:
        out.write('smiles\t' + '\t'.join(names) + '\n')
        for s in smiles:
            out.write(s + '\t' + '\t'.join(repr(float(f(s))) for f in scorers) + '\n')
    os.replace(tmp, a.out)


if __name__ == '__main__':
    main()
