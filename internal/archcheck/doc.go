// Package archcheck holds no code: its tests hold the repository to its
// package map (every import points down it) and to its size rules.
package archcheck
