#!/usr/bin/python3
"""Scores molecules with GuacaMol's own code, to check internal/task/molecule/objectives against it.

make_fixtures.py writes GuacaMol's definitions again (GuacaMol is not installable here); this script
runs GuacaMol's source itself: its goal-directed benchmarks' objectives (standard_benchmarks.py),
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

# PMO's names for GuacaMol's benchmarks (TDC's oracles are these functions).
BENCHMARKS = {
    'celecoxib_rediscovery': lambda sb: sb.similarity(
        smiles='CC1=CC=C(C=C1)C1=CC(=NN1C1=CC=C(C=C1)S(N)(=O)=O)C(F)(F)F', name='Celecoxib',
        fp_type='ECFP4', threshold=1.0, rediscovery=True),
    'troglitazone_rediscovery': lambda sb: sb.similarity(
        smiles='Cc1c(C)c2OC(C)(COc3ccc(CC4SC(=O)NC4=O)cc3)CCc2c(C)c1O', name='Troglitazone',
        fp_type='ECFP4', threshold=1.0, rediscovery=True),
    'thiothixene_rediscovery': lambda sb: sb.similarity(
        smiles='CN(C)S(=O)(=O)c1ccc2Sc3ccccc3C(=CCCN4CCN(C)CC4)c2c1', name='Thiothixene',
        fp_type='ECFP4', threshold=1.0, rediscovery=True),
    'albuterol_similarity': lambda sb: sb.similarity(
        smiles='CC(C)(C)NCC(O)c1ccc(O)c(CO)c1', name='Albuterol', fp_type='FCFP4', threshold=0.75),
    'mestranol_similarity': lambda sb: sb.similarity(
        smiles='COc1ccc2[C@H]3CC[C@@]4(C)[C@@H](CC[C@@]4(O)C#C)[C@@H]3CCc2c1', name='Mestranol',
        fp_type='AP', threshold=0.75),
    'isomers_c7h8n2o2': lambda sb: sb.isomers_c7h8n2o2(),
    'isomers_c9h10n2o2pf2cl': lambda sb: sb.isomers_c9h10n2o2pf2cl(),
    'median1': lambda sb: sb.median_camphor_menthol(),
    'median2': lambda sb: sb.median_tadalafil_sildenafil(),
    'osimertinib_mpo': lambda sb: sb.hard_osimertinib(),
    'fexofenadine_mpo': lambda sb: sb.hard_fexofenadine(),
    'ranolazine_mpo': lambda sb: sb.ranolazine_mpo(),
    'perindopril_mpo': lambda sb: sb.perindopril_rings(),
    'amlodipine_mpo': lambda sb: sb.amlodipine_rings(),
    'sitagliptin_mpo': lambda sb: sb.sitagliptin_replacement(),
    'zaleplon_mpo': lambda sb: sb.zaleplon_with_other_formula(),
    'valsartan_smarts': lambda sb: sb.valsartan_smarts(),
    'deco_hop': lambda sb: sb.decoration_hop(),
    'scaffold_hop': lambda sb: sb.scaffold_hop(),
}


def stand_ins():
    """A directory with empty fcd and tqdm packages, enough for GuacaMol's imports."""
    d = tempfile.mkdtemp(prefix='guacamol-stubs-')
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
    return d


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('checkout')
    p.add_argument('smiles')
    p.add_argument('out')
    p.add_argument('--objectives', default='qed,' + ','.join(BENCHMARKS))
    a = p.parse_args()
    sys.path[:0] = [os.path.abspath(a.checkout), stand_ins()]
    from rdkit import Chem, RDLogger
    from rdkit.Chem import QED
    import guacamol.standard_benchmarks as sb
    RDLogger.DisableLog('rdApp.*')

    names = a.objectives.split(',')
    scorers = []
    for n in names:
        if n == 'qed':
            def qed(s):
                m = Chem.MolFromSmiles(s)
                return -1.0 if m is None else QED.qed(m)
            scorers.append(qed)
        elif n in BENCHMARKS:
            scorers.append(BENCHMARKS[n](sb).objective.score)
        else:
            sys.exit(f'check_guacamol.py: unknown objective {n!r}')
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
