// Package model holds a solved clustering as a file that new rows can be
// assigned against: the memberships W, their Gram matrix WᵀW, and what the
// affinity of a new row to the training rows needs.
package model
