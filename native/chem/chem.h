/* chem.h: a small plain-C ABI over RDKit for tlbo-native.
 *
 * Molecules are opaque handles (an RDKit RWMol inside). Every function that can
 * fail returns 0 on success or non-zero on failure and then sets *err to a
 * malloc'd message that the caller releases with tlbo_chem_free. No C++
 * exception crosses this boundary. Handles are not shared between threads;
 * distinct handles may be used from distinct threads at once. */
#ifndef TLBO_CHEM_H
#define TLBO_CHEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tlbo_mol tlbo_mol;

/* One atom's fields. total_hs, in_ring and is_aromatic are -1 where RDKit
 * has not computed them (e.g. an unsanitised molecule). */
typedef struct {
  int atomic_num;
  int formal_charge;
  int total_hs;
  int degree;
  int is_aromatic;
  int in_ring;
  int map_num;
  int chiral_tag;
  int isotope;
} tlbo_chem_atom;

/* One bond's fields; type is RDKit's Bond::BondType value (1 single, 2 double,
 * 3 triple, 12 aromatic), order its valence contribution (1.5 for aromatic). */
typedef struct {
  int begin;
  int end;
  int type;
  int is_aromatic;
  int in_ring;
  int stereo;
  double order;
} tlbo_chem_bond;

void tlbo_chem_free(void *p);
void tlbo_chem_mol_free(tlbo_mol *m);
/* Turns RDKit's log output (rdApp.*) on or off; it starts off. */
int tlbo_chem_set_logging(int on, char **err);

/* Parsing and writing. */
int tlbo_chem_from_smiles(const char *smiles, int sanitize, tlbo_mol **out, char **err);
int tlbo_chem_new(tlbo_mol **out, char **err);
int tlbo_chem_copy(const tlbo_mol *m, tlbo_mol **out, char **err);
/* A copy with only element, formal charge, atom map and bond types (no H counts,
 * aromatic flags or stereo), unsanitised: JT-VAE's copy_edit_mol. */
int tlbo_chem_copy_edit(const tlbo_mol *m, tlbo_mol **out, char **err);
/* A new unsanitised molecule of n_atoms atoms (atomic number, formal charge and map number
 * each: 3 ints an atom) and n_bonds bonds (begin atom, end atom and Bond::BondType value:
 * 3 ints a bond), added in that order: the molecule that tlbo_chem_new, then
 * tlbo_chem_add_atom and tlbo_chem_add_bond for each make, in one call (and with their
 * errors: a map number outside 0..999, an atom index out of range, a bond that exists). */
int tlbo_chem_from_graph(const int *atoms, int n_atoms, const int *bonds, int n_bonds, tlbo_mol **out, char **err);
int tlbo_chem_to_smiles(const tlbo_mol *m, int isomeric, int kekule, int canonical, char **out, char **err);
int tlbo_chem_fragment_smiles(const tlbo_mol *m, const int *atoms, int n, int isomeric, int kekule,
                              int canonical, char **out, char **err);
/* Fragments (disconnected pieces) as new molecules. */
int tlbo_chem_fragments(const tlbo_mol *m, tlbo_mol ***out, int *n, char **err);

/* Chemistry. */
int tlbo_chem_kekulize(tlbo_mol *m, int clear_aromatic_flags, char **err);
int tlbo_chem_sanitize(tlbo_mol *m, char **err);
/* Symmetrised SSSR: ring sizes in sizes (n rings) and their atoms concatenated in atoms. */
int tlbo_chem_symm_sssr(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err);
/* The rings of the molecule's ring information (computed by sanitisation). */
int tlbo_chem_atom_rings(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err);
/* Stereo perception (legacy assignStereochemistry); *n_centers counts atoms with a
 * CIP code or, when flag_possible, flagged as possible stereo centres. */
int tlbo_chem_assign_stereo(tlbo_mol *m, int clean, int force, int flag_possible, int *n_centers, char **err);
int tlbo_chem_crippen_logp(const tlbo_mol *m, double *logp, char **err);
int tlbo_chem_spiro_bridgehead(const tlbo_mol *m, int *n_spiro, int *n_bridgehead, char **err);
/* Morgan fingerprint with counts (GetMorganFingerprint(m, radius, useFeatures=use_features,
 * useChirality=use_chirality)): n (id, count) pairs, ids sorted ascending. */
int tlbo_chem_morgan_counts(const tlbo_mol *m, int radius, int use_features, int use_chirality, uint32_t **ids,
                            int **counts, int *n, char **err);
/* Atom-pair fingerprint with counts (GetAtomPairFingerprint(m, minLength, maxLength,
 * includeChirality=include_chirality), 2D distances): n (id, count) pairs, ids ascending. */
int tlbo_chem_atom_pair_counts(const tlbo_mol *m, int min_length, int max_length, int include_chirality,
                               uint32_t **ids, int **counts, int *n, char **err);
/* A named descriptor of RDKit's C++ Descriptors, as a double:
 *   amw (average MW, hydrogens included: MolWt), heavy_amw, exact_mw, tpsa (CalcTPSA, no S and P),
 *   crippen_logp, crippen_mr, num_hbd, num_hba (CalcNumHBD/HBA), lipinski_hbd, lipinski_hba,
 *   num_rotatable_bonds (the default definition, Strict), num_rotatable_bonds_strict,
 *   num_rotatable_bonds_nonstrict, num_rings, num_aromatic_rings, num_heavy_atoms.
 * An unknown name is an error. */
int tlbo_chem_descriptor(const tlbo_mol *m, const char *name, double *out, char **err);
/* A SMARTS pattern as a query molecule (Chem.MolFromSmarts). Query handles may be
 * matched against distinct molecules from several threads at once. */
int tlbo_chem_from_smarts(const char *smarts, tlbo_mol **out, char **err);
/* SubstructMatch(m, q) with uniquify, use_chirality and max_matches (RDKit's defaults: 1, 0,
 * 1000): n_matches matches of match_size atoms each (m's indices, in q's atom order),
 * concatenated in atoms. */
int tlbo_chem_substruct_matches(const tlbo_mol *m, const tlbo_mol *q, int uniquify, int use_chirality,
                                int max_matches, int **atoms, int *n_matches, int *match_size, char **err);
/* DeleteSubstructs(m, q) (every match removed, onlyFrags false), as a new molecule. */
int tlbo_chem_delete_substructs(const tlbo_mol *m, const tlbo_mol *q, tlbo_mol **out, char **err);
/* AddHs(m) and RemoveHs(m) (sanitised), as new molecules. */
int tlbo_chem_add_hs(const tlbo_mol *m, tlbo_mol **out, char **err);
int tlbo_chem_remove_hs(const tlbo_mol *m, tlbo_mol **out, char **err);
/* The SSSR found afresh (Chem.GetSSSR: MolOps::findSSSR), as tlbo_chem_symm_sssr. */
int tlbo_chem_sssr(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err);
/* The distance matrix (Chem.GetDistanceMatrix(m, useBO=use_bo), recomputed), row-major into
 * out, which holds num_atoms^2 doubles. */
int tlbo_chem_distance_matrix(const tlbo_mol *m, int use_bo, double *out, char **err);
int tlbo_chem_draw_png(const tlbo_mol *m, int width, int height, unsigned char **png, size_t *n, char **err);

/* A MDL molfile (MolToMolBlock, kekulised, with stereo) of a copy of m laid out
 * in 2D (RDDepict::compute2DCoords, canonical orientation; z is 0): V2000, or
 * V3000 where V2000 cannot hold the molecule (over 999 atoms or bonds). The
 * title line is the molecule's _Name, empty when unset. *out is released with
 * tlbo_chem_free; m is unchanged. */
int tlbo_chem_molblock_2d(const tlbo_mol *m, char **out, char **err);

/* Fields. */
int tlbo_chem_num_atoms(const tlbo_mol *m);
int tlbo_chem_num_bonds(const tlbo_mol *m);
int tlbo_chem_atoms(const tlbo_mol *m, tlbo_chem_atom *out, char **err);
int tlbo_chem_bonds(const tlbo_mol *m, tlbo_chem_bond *out, char **err);
/* Index of the bond between atoms a and b, or -1. */
int tlbo_chem_bond_between(const tlbo_mol *m, int a, int b);

/* Editing. */
int tlbo_chem_add_atom(tlbo_mol *m, int atomic_num, int formal_charge, int map_num, int *idx, char **err);
int tlbo_chem_add_bond(tlbo_mol *m, int a, int b, int type, char **err);
int tlbo_chem_remove_bond(tlbo_mol *m, int a, int b, char **err);
/* Map numbers are RDKit's strict range 0..999 (Atom::setAtomMapNum); another is an
 * error, as is one given to tlbo_chem_add_atom. */
int tlbo_chem_set_atom_map(tlbo_mol *m, int atom, int map_num, char **err);
int tlbo_chem_set_all_atom_maps(tlbo_mol *m, int map_num, char **err);

#ifdef __cplusplus
}
#endif
#endif
