// Package all registers every task: import it for its side effect. Adding a
// task is one package plus one line here.
package all

import (
	_ "github.com/tlbo-native/tlbo-native/internal/task/expression" // expressions, grammar VAE
	_ "github.com/tlbo-native/tlbo-native/internal/task/molecule"   // SMILES, JT-VAE
	_ "github.com/tlbo-native/tlbo-native/internal/task/topology"   // 40x40 SIMP designs, conv VAE
)
