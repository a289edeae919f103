// chem.cpp: the plain-C ABI of chem.h over RDKit. Every entry point catches
// every exception and reports it as a status and an error string: an exception
// that left an extern "C" function would call std::terminate and abort the Go
// program. RDKit's PRECONDITION, CHECK_INVARIANT and range checks throw
// Invar::Invariant (a std::runtime_error in 2022.09, which guard catches by
// name for its message; anything else falls to std::exception or catch (...)),
// so every entry point that calls RDKit goes through guard, however small.
#include "chem.h"

#include <GraphMol/Chirality.h>
#include <GraphMol/Depictor/RDDepictor.h>
#include <GraphMol/Descriptors/Crippen.h>
#include <GraphMol/ChemTransforms/ChemTransforms.h>
#include <GraphMol/Descriptors/Lipinski.h>
#include <GraphMol/Descriptors/MolDescriptors.h>
#include <GraphMol/Descriptors/MolSurf.h>
#include <GraphMol/FileParsers/FileParsers.h>
#include <GraphMol/Fingerprints/AtomPairs.h>
#include <GraphMol/Fingerprints/FingerprintUtil.h>
#include <GraphMol/Fingerprints/MorganFingerprints.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolDraw2D/MolDraw2DCairo.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>
#include <GraphMol/Substruct/SubstructMatch.h>
#include <RDGeneral/RDLog.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct tlbo_mol {
  std::unique_ptr<RDKit::RWMol> mol;
};

namespace {

char *dup(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

int fail(char **err, const std::string &msg) {
  if (err) *err = dup(msg);
  return 1;
}

// invariant_message is an Invariant on one line (toUserString takes five):
// RDKit's message, the failed expression and where it is.
std::string invariant_message(const Invar::Invariant &e) {
  std::string file = e.getFile() ? e.getFile() : "";
  auto slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return std::string(e.what()) + " (RDKit invariant " + e.getExpression() + ", " + file + ":" +
         std::to_string(e.getLine()) + ")";
}

// guard runs f, turning any exception into a status and message.
template <typename F>
int guard(char **err, F f) {
  try {
    return f();
  } catch (const RDKit::MolSanitizeException &e) {
    return fail(err, e.what());
  } catch (const Invar::Invariant &e) {
    return fail(err, invariant_message(e));
  } catch (const std::exception &e) {
    return fail(err, e.what());
  } catch (...) {
    return fail(err, "unknown C++ exception");
  }
}

// RDKit logs to stderr by default: silence it once, before the first use.
std::once_flag logs_once;
void init_logs() {
  std::call_once(logs_once, [] {
    RDLog::InitLogs();
    boost::logging::disable_logs("rdApp.*");
  });
}

template <typename T>
T *alloc_copy(const std::vector<T> &v) {
  T *p = static_cast<T *>(std::malloc(sizeof(T) * (v.empty() ? 1 : v.size())));
  if (!p) throw std::bad_alloc();
  if (!v.empty()) std::memcpy(p, v.data(), sizeof(T) * v.size());
  return p;
}

void flatten_rings(const RDKit::VECT_INT_VECT &rings, int **atoms, int **sizes, int *n) {
  std::vector<int> flat, sz;
  for (const auto &r : rings) {
    sz.push_back(static_cast<int>(r.size()));
    flat.insert(flat.end(), r.begin(), r.end());
  }
  *atoms = alloc_copy(flat);
  try {
    *sizes = alloc_copy(sz);
  } catch (...) {
    std::free(*atoms);
    throw;
  }
  *n = static_cast<int>(sz.size());
}

// take_counts copies a sparse count vector's non-zero (id, count) pairs, ids ascending.
template <typename I>
void take_counts(const RDKit::SparseIntVect<I> &fp, uint32_t **ids, int **counts, int *n) {
  std::vector<uint32_t> id;
  std::vector<int> c;
  for (const auto &kv : fp.getNonzeroElements()) {
    if (kv.first < 0) throw std::runtime_error("negative fingerprint id");
    id.push_back(static_cast<uint32_t>(kv.first));
    c.push_back(kv.second);
  }
  *ids = alloc_copy(id);
  try {
    *counts = alloc_copy(c);
  } catch (...) {
    std::free(*ids);
    throw;
  }
  *n = static_cast<int>(id.size());
}

void check_atom(const RDKit::ROMol &m, int a) {
  if (a < 0 || a >= static_cast<int>(m.getNumAtoms()))
    throw std::out_of_range("atom index " + std::to_string(a) + " out of range");
}

}  // namespace

extern "C" {

void tlbo_chem_free(void *p) { std::free(p); }
void tlbo_chem_mol_free(tlbo_mol *m) { delete m; }

int tlbo_chem_set_logging(int on, char **err) {
  return guard(err, [&] {
    init_logs();
    if (on)
      boost::logging::enable_logs("rdApp.*");
    else
      boost::logging::disable_logs("rdApp.*");
    return 0;
  });
}

int tlbo_chem_from_smiles(const char *smiles, int sanitize, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    init_logs();
    std::unique_ptr<RDKit::RWMol> m(RDKit::SmilesToMol(std::string(smiles), 0, sanitize != 0));
    if (!m) return fail(err, "cannot parse SMILES");
    *out = new tlbo_mol{std::move(m)};
    return 0;
  });
}

int tlbo_chem_new(tlbo_mol **out, char **err) {
  return guard(err, [&] {
    init_logs();
    *out = new tlbo_mol{std::make_unique<RDKit::RWMol>()};
    return 0;
  });
}

int tlbo_chem_copy(const tlbo_mol *m, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    *out = new tlbo_mol{std::make_unique<RDKit::RWMol>(*m->mol)};
    return 0;
  });
}

int tlbo_chem_copy_edit(const tlbo_mol *m, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    auto h = std::make_unique<tlbo_mol>(tlbo_mol{std::make_unique<RDKit::RWMol>()});
    for (const auto *a : m->mol->atoms()) {
      auto na = std::make_unique<RDKit::Atom>(a->getAtomicNum());
      na->setFormalCharge(a->getFormalCharge());
      na->setAtomMapNum(a->getAtomMapNum(), false);  // a copy: whatever number the SMILES gave
      h->mol->addAtom(na.release(), false, true);
    }
    for (const auto *b : m->mol->bonds())
      h->mol->addBond(b->getBeginAtomIdx(), b->getEndAtomIdx(), b->getBondType());
    *out = h.release();
    return 0;
  });
}

int tlbo_chem_from_graph(const int *atoms, int n_atoms, const int *bonds, int n_bonds, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    init_logs();
    if (n_atoms < 0 || n_bonds < 0) return fail(err, "negative atom or bond count");
    auto m = std::make_unique<RDKit::RWMol>();
    for (int i = 0; i < n_atoms; ++i) {
      auto a = std::make_unique<RDKit::Atom>(atoms[3 * i]);
      a->setFormalCharge(atoms[3 * i + 1]);
      a->setAtomMapNum(atoms[3 * i + 2]);  // throws for a number outside 0..999, as tlbo_chem_add_atom
      m->addAtom(a.release(), false, true);
    }
    for (int i = 0; i < n_bonds; ++i) {
      int a = bonds[3 * i], b = bonds[3 * i + 1];
      check_atom(*m, a);
      check_atom(*m, b);
      m->addBond(static_cast<unsigned>(a), static_cast<unsigned>(b),
                 static_cast<RDKit::Bond::BondType>(bonds[3 * i + 2]));
    }
    *out = new tlbo_mol{std::move(m)};
    return 0;
  });
}

int tlbo_chem_to_smiles(const tlbo_mol *m, int isomeric, int kekule, int canonical, char **out, char **err) {
  return guard(err, [&] {
    std::string s = RDKit::MolToSmiles(*m->mol, isomeric != 0, kekule != 0, -1, canonical != 0);
    *out = dup(s);
    return 0;
  });
}

int tlbo_chem_fragment_smiles(const tlbo_mol *m, const int *atoms, int n, int isomeric, int kekule,
                              int canonical, char **out, char **err) {
  return guard(err, [&] {
    std::vector<int> use(atoms, atoms + n);
    for (int a : use) check_atom(*m->mol, a);
    std::string s = RDKit::MolFragmentToSmiles(*m->mol, use, nullptr, nullptr, nullptr, isomeric != 0,
                                               kekule != 0, -1, canonical != 0);
    *out = dup(s);
    return 0;
  });
}

int tlbo_chem_fragments(const tlbo_mol *m, tlbo_mol ***out, int *n, char **err) {
  return guard(err, [&] {
    auto frags = RDKit::MolOps::getMolFrags(*m->mol, true);
    std::vector<tlbo_mol *> hs;
    try {
      for (const auto &f : frags) hs.push_back(new tlbo_mol{std::make_unique<RDKit::RWMol>(*f)});
      *out = alloc_copy(hs);
    } catch (...) {
      for (auto *h : hs) delete h;
      throw;
    }
    *n = static_cast<int>(hs.size());
    return 0;
  });
}

int tlbo_chem_kekulize(tlbo_mol *m, int clear_aromatic_flags, char **err) {
  return guard(err, [&] {
    RDKit::MolOps::Kekulize(*m->mol, clear_aromatic_flags != 0);
    return 0;
  });
}

int tlbo_chem_sanitize(tlbo_mol *m, char **err) {
  return guard(err, [&] {
    RDKit::MolOps::sanitizeMol(*m->mol);
    return 0;
  });
}

int tlbo_chem_symm_sssr(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err) {
  return guard(err, [&] {
    RDKit::VECT_INT_VECT rings;
    RDKit::MolOps::symmetrizeSSSR(*m->mol, rings);
    flatten_rings(rings, atoms, sizes, n);
    return 0;
  });
}

int tlbo_chem_atom_rings(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err) {
  return guard(err, [&] {
    if (!m->mol->getRingInfo()->isInitialized()) RDKit::MolOps::findSSSR(*m->mol);
    flatten_rings(m->mol->getRingInfo()->atomRings(), atoms, sizes, n);
    return 0;
  });
}

int tlbo_chem_assign_stereo(tlbo_mol *m, int clean, int force, int flag_possible, int *n_centers, char **err) {
  return guard(err, [&] {
    RDKit::MolOps::assignStereochemistry(*m->mol, clean != 0, force != 0, flag_possible != 0);
    int c = 0;
    for (const auto *a : m->mol->atoms()) {
      if (a->hasProp(RDKit::common_properties::_CIPCode) ||
          (flag_possible && a->hasProp(RDKit::common_properties::_ChiralityPossible)))
        ++c;
    }
    *n_centers = c;
    return 0;
  });
}

int tlbo_chem_crippen_logp(const tlbo_mol *m, double *logp, char **err) {
  return guard(err, [&] {
    double mr = 0;
    RDKit::Descriptors::calcCrippenDescriptors(*m->mol, *logp, mr, true, true);
    return 0;
  });
}

int tlbo_chem_spiro_bridgehead(const tlbo_mol *m, int *n_spiro, int *n_bridgehead, char **err) {
  return guard(err, [&] {
    *n_spiro = static_cast<int>(RDKit::Descriptors::calcNumSpiroAtoms(*m->mol));
    *n_bridgehead = static_cast<int>(RDKit::Descriptors::calcNumBridgeheadAtoms(*m->mol));
    return 0;
  });
}

int tlbo_chem_morgan_counts(const tlbo_mol *m, int radius, int use_features, int use_chirality, uint32_t **ids,
                            int **counts, int *n, char **err) {
  return guard(err, [&] {
    if (radius < 0) return fail(err, "negative Morgan radius");
    std::vector<std::uint32_t> invars;
    std::vector<std::uint32_t> *inv = nullptr;
    if (use_features) {
      invars.resize(m->mol->getNumAtoms());
      RDKit::MorganFingerprints::getFeatureInvariants(*m->mol, invars);
      inv = &invars;
    }
    std::unique_ptr<RDKit::SparseIntVect<std::uint32_t>> fp(RDKit::MorganFingerprints::getFingerprint(
        *m->mol, static_cast<unsigned>(radius), inv, nullptr, use_chirality != 0, true, true));
    take_counts(*fp, ids, counts, n);
    return 0;
  });
}

int tlbo_chem_atom_pair_counts(const tlbo_mol *m, int min_length, int max_length, int include_chirality,
                               uint32_t **ids, int **counts, int *n, char **err) {
  return guard(err, [&] {
    if (min_length < 1 || max_length < min_length) return fail(err, "bad atom-pair path lengths");
    std::unique_ptr<RDKit::SparseIntVect<std::int32_t>> fp(RDKit::AtomPairs::getAtomPairFingerprint(
        *m->mol, static_cast<unsigned>(min_length), static_cast<unsigned>(max_length), nullptr, nullptr, nullptr,
        include_chirality != 0, true, -1));
    take_counts(*fp, ids, counts, n);
    return 0;
  });
}

int tlbo_chem_descriptor(const tlbo_mol *m, const char *name, double *out, char **err) {
  return guard(err, [&] {
    using namespace RDKit::Descriptors;
    static const std::map<std::string, std::function<double(const RDKit::ROMol &)>> table = {
        {"amw", [](const RDKit::ROMol &x) { return calcAMW(x, false); }},
        {"heavy_amw", [](const RDKit::ROMol &x) { return calcAMW(x, true); }},
        {"exact_mw", [](const RDKit::ROMol &x) { return calcExactMW(x, false); }},
        {"tpsa", [](const RDKit::ROMol &x) { return calcTPSA(x, true, false); }},
        {"crippen_logp",
         [](const RDKit::ROMol &x) {
           double logp = 0, mr = 0;
           calcCrippenDescriptors(x, logp, mr, true, true);
           return logp;
         }},
        {"crippen_mr",
         [](const RDKit::ROMol &x) {
           double logp = 0, mr = 0;
           calcCrippenDescriptors(x, logp, mr, true, true);
           return mr;
         }},
        {"num_hbd", [](const RDKit::ROMol &x) { return double(calcNumHBD(x)); }},
        {"num_hba", [](const RDKit::ROMol &x) { return double(calcNumHBA(x)); }},
        {"lipinski_hbd", [](const RDKit::ROMol &x) { return double(calcLipinskiHBD(x)); }},
        {"lipinski_hba", [](const RDKit::ROMol &x) { return double(calcLipinskiHBA(x)); }},
        {"num_rotatable_bonds", [](const RDKit::ROMol &x) { return double(calcNumRotatableBonds(x)); }},
        {"num_rotatable_bonds_strict",
         [](const RDKit::ROMol &x) { return double(calcNumRotatableBonds(x, Strict)); }},
        {"num_rotatable_bonds_nonstrict",
         [](const RDKit::ROMol &x) { return double(calcNumRotatableBonds(x, NonStrict)); }},
        {"num_rings", [](const RDKit::ROMol &x) { return double(calcNumRings(x)); }},
        {"num_aromatic_rings", [](const RDKit::ROMol &x) { return double(calcNumAromaticRings(x)); }},
        {"num_heavy_atoms", [](const RDKit::ROMol &x) { return double(calcNumHeavyAtoms(x)); }},
    };
    auto it = table.find(name ? name : "");
    if (it == table.end()) return fail(err, std::string("unknown descriptor ") + (name ? name : "(null)"));
    *out = it->second(*m->mol);
    return 0;
  });
}

int tlbo_chem_from_smarts(const char *smarts, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    init_logs();
    std::unique_ptr<RDKit::RWMol> q(RDKit::SmartsToMol(std::string(smarts)));
    if (!q) return fail(err, "cannot parse SMARTS");
    *out = new tlbo_mol{std::move(q)};
    return 0;
  });
}

int tlbo_chem_substruct_matches(const tlbo_mol *m, const tlbo_mol *q, int uniquify, int use_chirality,
                                int max_matches, int **atoms, int *n_matches, int *match_size, char **err) {
  return guard(err, [&] {
    if (max_matches < 1) return fail(err, "max_matches must be positive");
    RDKit::SubstructMatchParameters ps;
    ps.uniquify = uniquify != 0;
    ps.useChirality = use_chirality != 0;
    ps.maxMatches = static_cast<unsigned>(max_matches);
    auto matches = RDKit::SubstructMatch(*m->mol, *q->mol, ps);
    std::vector<int> flat;
    int size = static_cast<int>(q->mol->getNumAtoms());
    for (const auto &match : matches) {
      if (static_cast<int>(match.size()) != size) throw std::runtime_error("match of unexpected size");
      for (const auto &pr : match) flat.push_back(pr.second);
    }
    *atoms = alloc_copy(flat);
    *n_matches = static_cast<int>(matches.size());
    *match_size = size;
    return 0;
  });
}

int tlbo_chem_delete_substructs(const tlbo_mol *m, const tlbo_mol *q, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    std::unique_ptr<RDKit::ROMol> r(RDKit::deleteSubstructs(*m->mol, *q->mol, false, false));
    *out = new tlbo_mol{std::make_unique<RDKit::RWMol>(*r)};
    return 0;
  });
}

int tlbo_chem_add_hs(const tlbo_mol *m, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    auto r = std::make_unique<RDKit::RWMol>(*m->mol);
    RDKit::MolOps::addHs(*r);
    *out = new tlbo_mol{std::move(r)};
    return 0;
  });
}

int tlbo_chem_remove_hs(const tlbo_mol *m, tlbo_mol **out, char **err) {
  return guard(err, [&] {
    auto r = std::make_unique<RDKit::RWMol>(*m->mol);
    RDKit::MolOps::removeHs(*r);
    *out = new tlbo_mol{std::move(r)};
    return 0;
  });
}

int tlbo_chem_sssr(tlbo_mol *m, int **atoms, int **sizes, int *n, char **err) {
  return guard(err, [&] {
    RDKit::VECT_INT_VECT rings;
    RDKit::MolOps::findSSSR(*m->mol, rings);
    flatten_rings(rings, atoms, sizes, n);
    return 0;
  });
}

int tlbo_chem_distance_matrix(const tlbo_mol *m, int use_bo, double *out, char **err) {
  return guard(err, [&] {
    const double *d = RDKit::MolOps::getDistanceMat(*m->mol, use_bo != 0, false, true);
    size_t n = m->mol->getNumAtoms();
    if (n) std::memcpy(out, d, sizeof(double) * n * n);
    return 0;
  });
}

int tlbo_chem_draw_png(const tlbo_mol *m, int width, int height, unsigned char **png, size_t *n, char **err) {
  return guard(err, [&] {
    RDKit::MolDraw2DCairo drawer(width, height);
    RDKit::ROMol copy(*m->mol);
    drawer.drawMolecule(copy);
    drawer.finishDrawing();
    std::string text = drawer.getDrawingText();
    auto *p = static_cast<unsigned char *>(std::malloc(text.size() ? text.size() : 1));
    if (!p) throw std::bad_alloc();
    std::memcpy(p, text.data(), text.size());
    *png = p;
    *n = text.size();
    return 0;
  });
}

int tlbo_chem_molblock_2d(const tlbo_mol *m, char **out, char **err) {
  return guard(err, [&] {
    RDKit::ROMol copy(*m->mol);
    // Laid out here, any conformer cleared: MolToMolBlock would write one the
    // handle carried (3D). canonOrient as Python's rdDepictor.Compute2DCoords.
    RDDepict::compute2DCoords(copy, nullptr, true);
    std::string block = RDKit::MolToMolBlock(copy, true, -1, true, false);
    char *p = dup(block);
    if (!p) throw std::bad_alloc();
    *out = p;
    return 0;
  });
}

// getNumAtoms and getNumBonds only read a vector's size: they cannot throw.
int tlbo_chem_num_atoms(const tlbo_mol *m) { return static_cast<int>(m->mol->getNumAtoms()); }
int tlbo_chem_num_bonds(const tlbo_mol *m) { return static_cast<int>(m->mol->getNumBonds()); }

int tlbo_chem_atoms(const tlbo_mol *m, tlbo_chem_atom *out, char **err) {
  return guard(err, [&] {
    const auto *ri = m->mol->getRingInfo();
    for (const auto *a : m->mol->atoms()) {
      tlbo_chem_atom &o = out[a->getIdx()];
      o.atomic_num = a->getAtomicNum();
      o.formal_charge = a->getFormalCharge();
      o.degree = static_cast<int>(a->getDegree());
      o.is_aromatic = a->getIsAromatic() ? 1 : 0;
      o.in_ring = ri->isInitialized() ? (ri->numAtomRings(a->getIdx()) > 0 ? 1 : 0) : -1;
      o.map_num = a->getAtomMapNum();
      o.chiral_tag = static_cast<int>(a->getChiralTag());
      o.isotope = static_cast<int>(a->getIsotope());
      if (a->needsUpdatePropertyCache())
        o.total_hs = -1;
      else
        o.total_hs = static_cast<int>(a->getTotalNumHs());
    }
    return 0;
  });
}

int tlbo_chem_bonds(const tlbo_mol *m, tlbo_chem_bond *out, char **err) {
  return guard(err, [&] {
    const auto *ri = m->mol->getRingInfo();
    for (const auto *b : m->mol->bonds()) {
      tlbo_chem_bond &o = out[b->getIdx()];
      o.begin = static_cast<int>(b->getBeginAtomIdx());
      o.end = static_cast<int>(b->getEndAtomIdx());
      o.type = static_cast<int>(b->getBondType());
      o.is_aromatic = b->getIsAromatic() ? 1 : 0;
      o.in_ring = ri->isInitialized() ? (ri->numBondRings(b->getIdx()) > 0 ? 1 : 0) : -1;
      o.stereo = static_cast<int>(b->getStereo());
      o.order = b->getBondTypeAsDouble();
    }
    return 0;
  });
}

int tlbo_chem_bond_between(const tlbo_mol *m, int a, int b) {
  try {
    int n = static_cast<int>(m->mol->getNumAtoms());
    if (a < 0 || b < 0 || a >= n || b >= n) return -1;
    const auto *bond = m->mol->getBondBetweenAtoms(a, b);
    return bond ? static_cast<int>(bond->getIdx()) : -1;
  } catch (...) {
    return -1;  // getBondBetweenAtoms range-checks the indices checked above
  }
}

int tlbo_chem_add_atom(tlbo_mol *m, int atomic_num, int formal_charge, int map_num, int *idx, char **err) {
  return guard(err, [&] {
    auto a = std::make_unique<RDKit::Atom>(atomic_num);
    a->setFormalCharge(formal_charge);
    a->setAtomMapNum(map_num);  // throws for a number outside 0..999, before the molecule takes the atom
    *idx = static_cast<int>(m->mol->addAtom(a.release(), false, true));
    return 0;
  });
}

int tlbo_chem_add_bond(tlbo_mol *m, int a, int b, int type, char **err) {
  return guard(err, [&] {
    check_atom(*m->mol, a);
    check_atom(*m->mol, b);
    m->mol->addBond(static_cast<unsigned>(a), static_cast<unsigned>(b), static_cast<RDKit::Bond::BondType>(type));
    return 0;
  });
}

int tlbo_chem_remove_bond(tlbo_mol *m, int a, int b, char **err) {
  return guard(err, [&] {
    check_atom(*m->mol, a);
    check_atom(*m->mol, b);
    m->mol->removeBond(static_cast<unsigned>(a), static_cast<unsigned>(b));
    return 0;
  });
}

int tlbo_chem_set_atom_map(tlbo_mol *m, int atom, int map_num, char **err) {
  return guard(err, [&] {
    check_atom(*m->mol, atom);
    m->mol->getAtomWithIdx(atom)->setAtomMapNum(map_num);
    return 0;
  });
}

int tlbo_chem_set_all_atom_maps(tlbo_mol *m, int map_num, char **err) {
  return guard(err, [&] {
    for (auto *a : m->mol->atoms()) a->setAtomMapNum(map_num);
    return 0;
  });
}

}  // extern "C"
