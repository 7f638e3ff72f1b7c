module example.com/archfixture

go 1.26.0
