package score_test

import (
	"fmt"

	"github.com/ssnmf/ssnmf/score"
)

// Two classes of three points, split into three clusters of two.
var (
	truth = []int{0, 0, 0, 1, 1, 1}
	pred  = []int{0, 0, 1, 1, 2, 2}
)

func ExampleARI() {
	ari, err := score.ARI(truth, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ARI = %.4f\n", ari)

	// Renaming the clusters does not change the score.
	ari, _ = score.ARI(truth, []int{7, 7, 3, 3, 9, 9})
	fmt.Printf("ARI = %.4f\n", ari)
	// Output:
	// ARI = 0.2424
	// ARI = 0.2424
}

func ExampleNMI() {
	nmi, err := score.NMI(truth, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("NMI = %.4f\n", nmi)

	// Both partitions with a single cluster count as a perfect match.
	nmi, _ = score.NMI([]int{4, 4, 4}, []int{0, 0, 0})
	fmt.Printf("NMI = %.4f\n", nmi)
	// Output:
	// NMI = 0.5158
	// NMI = 1.0000
}

func ExampleAccuracy() {
	// Matching cluster 0 to class 0 and cluster 2 to class 1 places four of
	// the six points correctly; cluster 1 is left unmatched.
	acc, err := score.Accuracy(truth, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accuracy = %.4f\n", acc)

	_, err = score.Accuracy(truth, pred[:5])
	fmt.Println(err)
	// Output:
	// accuracy = 0.6667
	// score: length mismatch: truth has 6 labels, pred has 5
}

func ExampleCompare() {
	s, err := score.Compare(truth, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ARI = %.4f, NMI = %.4f, accuracy = %.4f\n", s.ARI, s.NMI, s.Accuracy)
	// Output:
	// ARI = 0.2424, NMI = 0.5158, accuracy = 0.6667
}

// Calibrate says whether soft memberships are surer where the clustering is
// right: here the one row put in the wrong cluster is also the least sure.
func ExampleCalibrate() {
	classes := []int{0, 0, 0, 1, 1, 1}
	w := []float64{ // two clusters, one row per point
		0.9, 0.1,
		0.8, 0.2,
		0.45, 0.55, // the wrong cluster, barely
		0.1, 0.9,
		0.2, 0.8,
		0.05, 0.95,
	}
	c, err := score.Calibrate(classes, w, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("right %d, mean largest membership %.3f right, %.3f wrong; Brier %.4f\n",
		c.Correct, c.ConfidentCorrect, c.ConfidentWrong, c.Brier)
	// Output:
	// right 5, mean largest membership 0.870 right, 0.550 wrong; Brier 0.1350
}
