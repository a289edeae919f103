// Package expression is the arithmetic-expression task of T-LBO (Kusner et al. 2017's
// Grammar VAE benchmark, as set up by the weighted-retraining and T-LBO reference code).
//
// Grammar and encoding. Expressions of x are derived from the context-free grammar
//
//	S -> S '+' T | S '*' T | S '/' T | T
//	T -> '(' S ')' | 'sin(' S ')' | 'exp(' S ')' | 'x' | '1' | '2' | '3'
//	Nothing -> None
//
// whose 12 productions, in this order, are the columns of the one-hot encoding. Parse
// gives the leftmost derivation (at most MaxRules = 15 rules), which is the tree nltk's
// ChartParser finds: the grammar is unambiguous, + * / have equal precedence and
// associate to the left. OneHot and Encode give the 15 x 12 matrix, padded with the
// production Nothing -> None; Decode turns a rule sequence back into text in the data
// set's spaced form ("x + sin( x ) / 3"). GrammarSpec gives the grammar as plain data
// for a grammar-masked decoder.
//
// Objective. NewObjective(target).Score(text) is min(7, log(1 + MSE)) between the
// expression and the target at NumPoints points evenly spaced on [-10, 10]; lower is
// better (LowerIsBetter) and any failure scores FailureScore = 7. The text is evaluated
// as the reference evaluates it with numpy's eval: Python's precedence (not the
// grammar's), IEEE arithmetic, failure when a value is Inf or NaN. The default target
// is DefaultTarget, 1 / 3 + x + sin( x * x ), the one the data set was scored with; the
// T-LBO paper's text writes 1/3 * x * sin(x*x), which NewObjective also accepts (the
// target parser takes '-', decimals and parentheses too).
//
// Data. Load reads equation2_15_dataset.txt (100,000 expressions) from a data
// directory, downloads it, or generates expressions by sampling the grammar, and scores
// it; Subset picks the reference's training subset (about 40,000 points, see Subset for
// how it is read); WriteNPZ and ReadNPZ store a data set as data/scores/expr npz files.
package expression
