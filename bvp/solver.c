int hs_placeholder_solver;
