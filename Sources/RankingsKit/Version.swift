public enum RankingsKitVersion { public static let string = "0.1.0" }
