public enum RankingsKitVersion { public static let string = "0.5.0" }
