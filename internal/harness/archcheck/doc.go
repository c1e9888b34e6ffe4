// Package archcheck holds the repository to the plan that
// docs/architecture.md writes down: it reads the document's package map
// and "never" table (plan.go), the real imports of every package
// (graph.go), and reports each import that breaks them (check.go). Its
// tests run that check on the tree and hold the code to its size rules.
package archcheck
