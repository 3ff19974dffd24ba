package main

// Example runs the program, so that go test keeps it working.
func Example() {
	main()
	// Output:
	// row  0: cluster 0, memberships [1.00 0.00 0.00]
	// row  5: cluster 0, memberships [1.00 0.00 0.00]
	// row 10: cluster 2, memberships [0.00 0.00 1.00]
	// row 15: cluster 2, memberships [0.00 0.00 1.00]
	// row 20: cluster 1, memberships [0.00 1.00 0.00]
	// row 25: cluster 1, memberships [0.00 1.00 0.00]
}
