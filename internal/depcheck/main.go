package main
import (
 _ "gonum.org/v1/plot"
 _ "gonum.org/v1/plot/plotter"
 _ "gonum.org/v1/plot/vg/vgsvg"
 _ "gonum.org/v1/plot/vg/vgimg"
 _ "github.com/apache/arrow-go/v18/parquet/pqarrow"
 _ "github.com/apache/arrow-go/v18/parquet/file"
 _ "github.com/apache/arrow-go/v18/parquet/compress"
 _ "gonum.org/v1/gonum/optimize"
)
func main(){}
